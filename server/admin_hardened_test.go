package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// hardenedAdmin serves a gateway whose auth section is authYAML and
// returns its store and the admin API's base URL.
func hardenedAdmin(t *testing.T, authYAML string) (*sqlite.Store, string) {
	t.Helper()
	st := memStore(t)
	cfg, err := config.Parse([]byte("auth: "+authYAML+"\nconnectors:\n  - {id: s, type: echo-test}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return st, strings.TrimSuffix(serve(t, gw), "/mcp") + "/admin/v1"
}

// stored reports whether the upstream id is stored.
func stored(t *testing.T, st *sqlite.Store, id string) bool {
	t.Helper()
	ups, err := st.Upstreams().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(ups, func(u store.Upstream) bool { return u.ID == id })
}

const farUpstream = `{"id":"far","url":"http://127.0.0.1:1/mcp"}`

// On a hardened deployment an admin not pinned cannot add an upstream
// through the admin API, and is told who it is and how to pin it; a
// pinned admin can; reads stay open to both.
func TestHardenedAdminAPIClosesChangesToPinnedPrincipals(t *testing.T) {
	st, base := hardenedAdmin(t, "{tokens: true, hardened: true, pins: [root]}")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	eve := token(t, st, auth.Principal{Name: "eve", Role: auth.RoleAdmin})

	status, body := adminCall(t, base, eve, "POST", "/upstreams", farUpstream)
	if status != http.StatusForbidden || !strings.Contains(body, `\"eve\"`) || !strings.Contains(body, "auth.pins") {
		t.Fatalf("eve adds an upstream: %d %s, want 403 naming eve and auth.pins", status, body)
	}
	if stored(t, st, "far") {
		t.Fatal("eve's refused upstream was stored")
	}
	for _, step := range []struct{ method, path, body string }{
		{"POST", "/connectors", `{"id":"added","type":"echo-test"}`},
		{"DELETE", "/connectors/s", ""},
		{"POST", "/connectors/s/test", ""},
		{"POST", "/tokens", `{"name":"bot","role":"user"}`},
		{"DELETE", "/tokens/root", ""},
		{"DELETE", "/sessions/none", ""},
	} {
		if status, body := adminCall(t, base, eve, step.method, step.path, step.body); status != http.StatusForbidden {
			t.Errorf("eve: %s %s: %d %s, want 403", step.method, step.path, status, body)
		}
	}
	if status, body := adminCall(t, base, eve, "GET", "/upstreams", ""); status != http.StatusOK {
		t.Errorf("eve lists upstreams: %d %s", status, body)
	}
	// A decision is no change of the deployment: an unknown request is
	// not found, not refused.
	if status, body := adminCall(t, base, eve, "POST", "/approvals/nope/deny", `{"reason":"no"}`); status == http.StatusForbidden {
		t.Errorf("eve decides: %d %s, want no refusal", status, body)
	}

	status, body = adminCall(t, base, root, "POST", "/upstreams", farUpstream)
	if status == http.StatusForbidden || status >= 500 {
		t.Fatalf("root adds an upstream: %d %s", status, body)
	}
	if !stored(t, st, "far") {
		t.Fatal("root's upstream was not stored")
	}
}

// Hardened with no pins, nobody changes the deployment over the admin API.
func TestHardenedAdminAPIWithoutPinsTakesNoChange(t *testing.T) {
	st, base := hardenedAdmin(t, "{tokens: true, hardened: true}")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	if status, body := adminCall(t, base, root, "POST", "/upstreams", farUpstream); status != http.StatusForbidden || !strings.Contains(body, `\"root\"`) {
		t.Fatalf("root adds an upstream: %d %s, want 403 naming root", status, body)
	}
}

// Hardened without authentication, the admin token names no principal to
// pin: reads answer, changes are refused.
func TestHardenedAdminAPIWithTheAdminTokenTakesNoChange(t *testing.T) {
	cfg, err := config.Parse([]byte("auth: {hardened: true, pins: [root]}\nconnectors:\n  - {id: s, type: echo-test}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := memStore(t)
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st, AdminToken: "admin-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	base := strings.TrimSuffix(serve(t, gw), "/mcp") + "/admin/v1"
	if status, body := adminCall(t, base, "admin-token", "GET", "/upstreams", ""); status != http.StatusOK {
		t.Errorf("listing upstreams: %d %s", status, body)
	}
	if status, body := adminCall(t, base, "admin-token", "POST", "/upstreams", farUpstream); status != http.StatusForbidden || !strings.Contains(body, "auth.pins") {
		t.Errorf("adding an upstream: %d %s, want 403 naming auth.pins", status, body)
	}
	if stored(t, st, "far") {
		t.Error("the refused upstream was stored")
	}
}
