package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server"
)

// selectionConfig has connector instances b, Charlie and d connected (their
// credential resolves), a not (LEGATE_TEST_UNSET is unset), and one
// profile per rule of connector selection.
const selectionConfig = `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
profiles:
  - {name: all, connectors: [{all: true}]}
  - {name: exclude, connectors: [{all: true, exclude: [charlie]}]}
  - {name: max, connectors: [{all: true, max: 2}]}
  - {name: named, connectors: [{name: a}]}
  - {name: named-uncapped, connectors: [{all: true, max: 1}, {name: b}]}
  - {name: other-tenant, connectors: [{all: true}]}
connectors:
  - {id: a, type: echo-test, credentials: {key: {env: LEGATE_TEST_UNSET}}}
  - {id: b, type: echo-test, credentials: {key: {env: LEGATE_TEST_KEY}}}
  - {id: charlie, type: echo-test, credentials: {key: {env: LEGATE_TEST_KEY}}}
  - {id: d, type: echo-test, credentials: {key: {env: LEGATE_TEST_KEY}}}
  - {id: t, type: echo-test, tenant: acme}
`

// sourcesOf lists the connector instances whose tools profile's view holds.
func sourcesOf(t *testing.T, gw *server.Gateway, p *auth.Principal) []string {
	t.Helper()
	var out []string
	for _, e := range server.ViewFor(gw, p).Entries() {
		if id := e.SourceID(); id != "legate" && !strings.HasPrefix(e.Canonical, "http.") && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func TestConnectorSelection(t *testing.T) {
	gw := newGateway(t, selectionConfig)
	for name, c := range map[string]struct {
		p    auth.Principal
		want []string
	}{
		// all: every connected instance the tenant can use; a is not
		// connected, t is acme's.
		"all keeps the connected": {auth.Principal{Profile: "all"}, []string{"b", "charlie", "d"}},
		// exclude drops ids, ignoring case.
		"exclude": {auth.Principal{Profile: "exclude"}, []string{"b", "d"}},
		// max keeps the first by id.
		"max": {auth.Principal{Profile: "max"}, []string{"b", "charlie"}},
		// a named instance is kept though not connected.
		"named not connected": {auth.Principal{Profile: "named"}, []string{"a"}},
		// a named one does not count against max, nor is capped away.
		"named never capped": {auth.Principal{Profile: "named-uncapped"}, []string{"b", "charlie"}},
		// another tenant's instances count for its principals.
		"tenant": {auth.Principal{Profile: "other-tenant", Tenant: "acme"}, []string{"b", "charlie", "d", "t"}},
	} {
		if got := sourcesOf(t, gw, &c.p); !slices.Equal(got, c.want) {
			t.Errorf("%s: the view holds the tools of %v, want %v", name, got, c.want)
		}
	}
}

// A top-level profile applies to the local principal and to tokens that
// name none.
func TestDefaultProfile(t *testing.T) {
	gw := newGateway(t, selectionConfig+"profile: exclude\n")
	if got := sourcesOf(t, gw, nil); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("the local principal sees %v", got)
	}
	if got := sourcesOf(t, gw, &auth.Principal{Name: "tok"}); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("a token naming no profile sees %v", got)
	}
	if got := sourcesOf(t, gw, &auth.Principal{Name: "tok", Profile: "named"}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("a token naming its profile sees %v", got)
	}
}

// A named connector the caller has not connected stays in the view, and a
// call to it says which credential is missing.
func TestNamedUnconnectedSaysHowToConnect(t *testing.T) {
	gw := newGateway(t, `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
profile: p
profiles:
  - {name: p, connectors: [{all: true}, {name: web}]}
connectors:
  - id: web
    type: http
    config: {base_url: "http://127.0.0.1:9/api", allow_private_networks: true, auth: bearer}
    credentials: {token: {env: LEGATE_TEST_UNSET}}
`)
	if got := sourcesOf(t, gw, nil); !slices.Equal(got, []string{"web"}) {
		t.Fatalf("the view holds %v, want the named web", got)
	}
	res, err := gw.Call(context.Background(), "web.call", json.RawMessage(`{"path":"/x"}`), server.CallOptions{})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "LEGATE_TEST_UNSET") {
		t.Fatalf("calling the unconnected web: %v %+v", err, res)
	}
}
