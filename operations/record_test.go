package operations_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/sources"
)

// An instance's status and environment follow from its definition, what
// its connector says and its health: each reason to be degraded is named.
func TestRecordStatusAndEnvironment(t *testing.T) {
	ok := &instances.Tested{OK: true, At: time.Now()}
	tested := func(f connectors.Facts) *instances.State {
		return &instances.State{Circuit: "closed", Test: &instances.Tested{OK: true, At: time.Now(), Facts: f}}
	}
	for name, tc := range map[string]struct {
		def     sources.InstanceDef
		desc    connectors.Description
		health  *instances.State
		status  string
		env     string
		circuit string
		reason  string
	}{
		"no server":                       {status: admin.StatusActive},
		"healthy":                         {health: &instances.State{Circuit: "closed", Test: ok}, status: admin.StatusActive, circuit: "closed"},
		"configured environment":          {def: sources.InstanceDef{Environment: "sandbox"}, status: admin.StatusActive, env: "sandbox"},
		"environment from settings":       {desc: connectors.Description{Environment: "production"}, status: admin.StatusActive, env: "production"},
		"environment from the credential": {health: tested(connectors.Facts{Environment: "sandbox"}), status: admin.StatusActive, env: "sandbox", circuit: "closed"},
		"another environment than configured": {def: sources.InstanceDef{Environment: "production"}, health: tested(connectors.Facts{Environment: "sandbox"}),
			status: admin.StatusDegraded, env: "production", circuit: "closed", reason: "the config says production, the credential is for sandbox"},
		"open circuit": {health: &instances.State{Circuit: "open", Failures: 0, LastFailure: "TRANSIENT: 502", RetryAt: time.Now().Add(time.Minute)},
			status: admin.StatusDegraded, circuit: "open", reason: "circuit open after repeated provider failures (the last: TRANSIENT: 502)"},
		"half-open circuit": {health: &instances.State{Circuit: "half-open"}, status: admin.StatusDegraded, circuit: "half-open", reason: "half-open"},
		"recent failures":   {health: &instances.State{Circuit: "closed", Failures: 2, LastFailure: "TIMEOUT"}, status: admin.StatusDegraded, circuit: "closed", reason: "2 provider failure(s) in a row"},
		"failed test":       {health: &instances.State{Circuit: "closed", Test: &instances.Tested{Error: "AUTH_EXPIRED: bad token"}}, status: admin.StatusDegraded, circuit: "closed", reason: "last test failed: AUTH_EXPIRED"},
		"missing scopes": {desc: connectors.Description{Scopes: []string{"repo", "workflow"}}, health: tested(connectors.Facts{ScopesKnown: true, Scopes: []string{"repo"}, Missing: []string{"workflow"}}),
			status: admin.StatusDegraded, circuit: "closed", reason: "missing scopes: workflow"},
		"disabled":       {def: sources.InstanceDef{Disabled: true}, health: &instances.State{Circuit: "open"}, status: admin.StatusDisabled, circuit: "open"},
		"server version": {health: tested(connectors.Facts{ServerVersion: "PostgreSQL 16.4"}), status: admin.StatusActive, circuit: "closed"},
	} {
		t.Run(name, func(t *testing.T) {
			r := operations.Record(tc.def, tc.desc, tc.health)
			if r.Status != tc.status || r.Environment != tc.env || r.Circuit != tc.circuit {
				t.Fatalf("status %q environment %q circuit %q, want %q %q %q", r.Status, r.Environment, r.Circuit, tc.status, tc.env, tc.circuit)
			}
			if tc.reason != "" && !slices.ContainsFunc(r.StatusReasons, func(s string) bool { return strings.Contains(s, tc.reason) }) {
				t.Errorf("reasons %q lack %q", r.StatusReasons, tc.reason)
			}
			if tc.status == admin.StatusActive && len(r.StatusReasons) > 0 {
				t.Errorf("active with reasons %q", r.StatusReasons)
			}
		})
	}
	r := operations.Record(sources.InstanceDef{}, connectors.Description{}, tested(connectors.Facts{ServerVersion: "PostgreSQL 16.4"}))
	if r.APIVersion != "PostgreSQL 16.4" || r.Scopes != nil {
		t.Errorf("a database's record: %+v", r)
	}
}
