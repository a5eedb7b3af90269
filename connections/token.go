package connections

import (
	"context"
	"strings"
	"unicode"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/vault"
)

// SetToken connects principal of tenant to instance with a credential
// the person supplies themselves: their own API key or personal access
// token, which the instance's calls by that principal alone then use
// (its per-user credential). It replaces any connection the principal
// had to instance, and is never refreshed; Revoke forgets it without
// asking the provider to revoke it. The instance must act as each caller
// and be the tenant's or shared; one whose per-user credential is an
// OAuth refresh token (google) connects through its OAuth app only.
func (m *Manager) SetToken(ctx context.Context, tenant, principal, instance, token string) (Info, error) {
	def, ok := m.apps.def(instance)
	switch {
	case !ok || def.Tenant != "" && def.Tenant != tenant:
		return Info{}, legate.Errorf(legate.CodeNotFound, "no connector instance %q", instance)
	case def.PerUserCredential() == "":
		return Info{}, legate.Errorf(legate.CodeInvalidArgument, "connector instance %q uses its shared credentials (credentials_mode %s): there is nothing of one's own to connect", instance, def.Mode)
	case def.OAuth != nil && config.Providers[def.Type].RefreshToken && def.OAuth.Credential == config.Providers[def.Type].Credential:
		return Info{}, legate.Errorf(legate.CodeInvalidArgument, "connector instance %q takes an OAuth refresh token: connect it with `legate connect %s`, without --token", instance, instance)
	case principal == "":
		return Info{}, legate.Errorf(legate.CodeInvalidArgument, "a connection needs a principal")
	}
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		return Info{}, legate.Errorf(legate.CodeInvalidArgument, "the token is empty")
	case len(token) > vault.MaxValueSize/2:
		return Info{}, legate.Errorf(legate.CodeInvalidArgument, "the token is over %d bytes", vault.MaxValueSize/2)
	case strings.IndexFunc(token, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return Info{}, legate.Errorf(legate.CodeInvalidArgument, "the token holds spaces or control characters: paste the token alone")
	}
	now := m.opts.Now()
	r := &record{Instance: instance, Principal: principal, Tenant: tenant, AccessToken: token, Status: StatusConnected, ConnectedAt: now, Kind: KindToken}
	m.opts.Masks.Add(token)
	if err := m.save(ctx, r); err != nil {
		return Info{}, err
	}
	m.gen.Add(1)
	if m.opts.OnConnected != nil {
		m.opts.OnConnected(instance, tenant, principal)
	}
	return r.info(now), nil
}
