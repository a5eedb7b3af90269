package connections

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/legate-mcp/legate/auth"
)

// StatusNotConnected is the status of a Connectable the caller has no
// connection to.
const StatusNotConnected = "not_connected"

// KindUpstream is the Kind of an OAuth-protected upstream MCP server.
const KindUpstream = "upstream"

// An OAuthUpstream is an upstream MCP server with auth: oauth, which
// people connect as they connect an instance.
type OAuthUpstream struct {
	ID string
	// Tenant owns the upstream ("" for a shared one).
	Tenant string
}

// A Connectable is what a principal may connect: an instance that acts
// as each caller through an OAuth app, or an OAuth-protected upstream, of
// the principal's tenant or shared, with the principal's own status.
type Connectable struct {
	Instance string `json:"instance"`
	// Kind is the instance's connector type, or KindUpstream.
	Kind   string `json:"kind"`
	Tenant string `json:"tenant,omitempty"`
	// Status is the principal's connection's: StatusConnected,
	// StatusExpired or StatusNotConnected.
	Status string `json:"status"`
}

// Connectable lists what principal of tenant may connect, by id.
func (m *Manager) Connectable(ctx context.Context, tenant, principal string) ([]Connectable, error) {
	var out []Connectable
	for _, d := range m.opts.Instances() {
		if d.PerUserCredential() != "" && (d.Tenant == "" || d.Tenant == tenant) {
			out = append(out, Connectable{Instance: d.ID, Kind: d.Type, Tenant: d.Tenant})
		}
	}
	if m.opts.OAuthUpstreams != nil {
		for _, u := range m.opts.OAuthUpstreams() {
			if _, isInstance := m.apps.def(u.ID); !isInstance && (u.Tenant == "" || u.Tenant == tenant) {
				out = append(out, Connectable{Instance: u.ID, Kind: KindUpstream, Tenant: u.Tenant})
			}
		}
	}
	for i := range out {
		out[i].Status = StatusNotConnected
		info, ok, err := m.Get(ctx, tenant, principal, out[i].Instance)
		if err != nil {
			return nil, err
		}
		if ok {
			out[i].Status = info.Status
		}
	}
	slices.SortFunc(out, func(a, b Connectable) int { return strings.Compare(a.Instance, b.Instance) })
	return out, nil
}

// Caller is the principal and tenant of r: its authenticated principal,
// else Options.Principal (a gateway without authentication).
func (m *Manager) Caller(r *http.Request) (principal, tenant string) {
	if p := auth.PrincipalFromContext(r.Context()); p != nil {
		return p.Name, p.Tenant
	}
	return m.opts.Principal, ""
}
