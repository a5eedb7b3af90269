package operations

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/sources"
)

// toolCounts are the number of catalog tools of each instance, none
// without a server.
func (o *ConnectorOps) toolCounts() map[string]int {
	tools := map[string]int{}
	if o.p.Catalog == nil {
		return tools
	}
	for _, in := range o.instances() {
		tools[in.ID] = in.Tools
	}
	return tools
}

// record is instance d as the API shows it: its definition, its last
// test, and its record, made from the running instance where a server
// runs it, else from its definition alone (no circuit, no test).
func (o *ConnectorOps) record(d sources.InstanceDef, tools int) admin.Connector {
	c := admin.Connector{ID: d.ID, Type: d.Type, Tenant: d.Tenant, Origin: d.Origin, Tools: tools,
		CredentialsMode: cmp.Or(d.Mode, config.CredentialsShared), OAuth: d.OAuth, UserCredential: d.UserCredential}
	for name, ref := range d.Credentials {
		if c.Credentials == nil {
			c.Credentials = map[string]string{}
		}
		c.Credentials[name] = ref.String()
	}
	o.mu.Lock()
	if t, ok := o.tests[d.ID]; ok {
		c.LastTest = &t
	}
	o.mu.Unlock()
	desc, health := o.live(d)
	if c.LastTest == nil && health != nil && health.Test != nil { // tested by the server, not through these operations
		c.LastTest = &admin.ConnectorTest{ID: d.ID, OK: health.Test.OK, Error: health.Test.Error, At: health.Test.At}
	}
	c.ConnectorRecord = Record(d, desc, health)
	return c
}

// live is what instance d's connector says of itself and, when a server
// runs it, its health (nil without one: the connector is then built
// from d, which is pure, to describe itself).
func (o *parts) live(d sources.InstanceDef) (connectors.Description, *instances.State) {
	var conn connectors.Connector
	var health *instances.State
	if o.p.Natives != nil {
		if in, ok := o.p.Natives().Find(d.ID); ok {
			conn = in.Conn
			if in.Health != nil {
				s := in.Health.State()
				health = &s
			}
		}
	}
	if conn == nil {
		conn, _ = d.Build() // one that does not build says nothing of itself
		if cl, ok := conn.(connectors.Closer); ok {
			defer cl.Close()
		}
	}
	var desc connectors.Description
	if ds, ok := conn.(connectors.Describer); ok {
		desc = ds.Describe()
	}
	return desc, health
}

// Record is the record of instance d: desc is what its connector says
// of itself, health (nil when no server runs it) its circuit and last
// test. Its status is disabled when d is; else degraded, with its
// reasons, when its circuit is not closed, its provider failed lately,
// its last test failed, its credential lacks scopes or says another
// environment than d; else active.
func Record(d sources.InstanceDef, desc connectors.Description, health *instances.State) admin.ConnectorRecord {
	r := admin.ConnectorRecord{AdapterVersion: desc.AdapterVersion, APIVersion: desc.APIVersion, Environment: cmp.Or(d.Environment, desc.Environment)}
	var facts connectors.Facts
	var reasons []string
	if health != nil {
		r.Circuit, r.Failures, r.LastFailure, r.LastFailureAt, r.RetryAt = health.Circuit, health.Failures, health.LastFailure, health.LastFailureAt, health.RetryAt
		switch {
		case health.Circuit == "open":
			reasons = append(reasons, fmt.Sprintf("circuit open after repeated provider failures (the last: %s); a trial call is let through at %s", r.LastFailure, r.RetryAt.UTC().Format("15:04:05Z")))
		case health.Circuit == "half-open":
			reasons = append(reasons, "circuit half-open: a trial call decides whether it closes")
		case health.Failures > 0:
			reasons = append(reasons, fmt.Sprintf("%d provider failure(s) in a row, the last: %s", health.Failures, r.LastFailure))
		}
		if t := health.Test; t != nil {
			facts = t.Facts
			if !t.OK {
				reasons = append(reasons, "last test failed: "+t.Error)
			}
		}
	}
	if r.APIVersion == "" {
		r.APIVersion = facts.ServerVersion
	}
	switch {
	case facts.Environment == "":
	case d.Environment == "":
		r.Environment = facts.Environment
	case d.Environment != facts.Environment:
		reasons = append(reasons, fmt.Sprintf("environment: the config says %s, the credential is for %s", d.Environment, facts.Environment))
	}
	if desc.Scopes != nil || facts.ScopesKnown {
		r.Scopes = &admin.Scopes{Needs: nonNil(desc.Scopes), Known: facts.ScopesKnown, Has: nonNil(facts.Scopes), Missing: nonNil(facts.Missing)}
		if len(facts.Missing) > 0 {
			reasons = append(reasons, "missing scopes: "+strings.Join(facts.Missing, ", "))
		}
	}
	switch {
	case d.Disabled:
		r.Status = admin.StatusDisabled
	case len(reasons) > 0:
		r.Status, r.StatusReasons = admin.StatusDegraded, reasons
	default:
		r.Status = admin.StatusActive
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
