package server_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// adminCall sends method path with tok to the admin API at base and
// returns the status and body.
func adminCall(t *testing.T, base, tok, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Every mutation of the admin API, succeeding or not, leaves an audit row
// naming the principal that made it.
func TestAdminMutationsAreAuditedWithTheirPrincipal(t *testing.T) {
	st, url, ids := tenantInbox(t)
	base := strings.TrimSuffix(url, "/approvals")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	steps := []struct{ method, path, body, action string }{
		{"POST", "/approvals/" + ids[""] + "/deny", `{"reason":"no"}`, "admin.approvals.deny"},
		{"POST", "/connectors", `{"id":"added","type":"echo-test"}`, "admin.connectors.add"},
		{"POST", "/connectors/s/test", "", "admin.connectors.test"},
		{"DELETE", "/connectors/added", "", "admin.connectors.remove"},
		{"POST", "/upstreams", `{"id":"far","url":"http://127.0.0.1:1/mcp"}`, "admin.upstreams.add"},
		{"DELETE", "/upstreams/far", "", "admin.upstreams.remove"},
		{"POST", "/tokens", `{"name":"bot","role":"user"}`, "admin.tokens.create"},
		{"DELETE", "/tokens/bot", "", "admin.tokens.revoke"},
		{"DELETE", "/sessions/none", "", "admin.sessions.close"},
	}
	for _, s := range steps {
		status, body := adminCall(t, base, root, s.method, s.path, s.body)
		if status >= 500 {
			t.Fatalf("%s %s: %d %s", s.method, s.path, status, body)
		}
	}
	var rows []store.AuditRow
	waitFor(t, "the audit rows of the admin's changes", func() bool {
		rows, _ = st.Audit().Query(context.Background(), store.AuditQuery{Principal: "root"})
		return len(rows) >= len(steps)
	})
	for _, s := range steps {
		if !slices.ContainsFunc(rows, func(r store.AuditRow) bool { return r.Tool == s.action && r.Principal == "root" && r.Source == "admin" }) {
			t.Errorf("%s %s: no audit row %s by root in %+v", s.method, s.path, s.action, rows)
		}
	}
	if i := slices.IndexFunc(rows, func(r store.AuditRow) bool { return r.Tool == "admin.sessions.close" }); i < 0 || rows[i].Outcome != "NOT_FOUND" {
		t.Errorf("closing a session that does not exist: %+v", rows)
	}
}

// An approver of tenant acme neither sees nor decides globex's request,
// nor reaches the routes that need the admin role.
func TestApproverOfOneTenantCannotReachAnother(t *testing.T) {
	st, url, ids := tenantInbox(t)
	base := strings.TrimSuffix(url, "/approvals")
	ann := token(t, st, auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleApprover})
	if s, body := adminCall(t, base, ann, "GET", "/approvals", ""); s != http.StatusOK || strings.Contains(body, ids["globex"]) || !strings.Contains(body, ids["acme"]) {
		t.Errorf("list: %d %s", s, body)
	}
	for _, p := range []string{"GET /approvals/" + ids["globex"], "POST /approvals/" + ids["globex"] + "/approve", "POST /approvals/" + ids["globex"] + "/deny"} {
		method, path, _ := strings.Cut(p, " ")
		if s, body := adminCall(t, base, ann, method, path, ""); s != http.StatusNotFound {
			t.Errorf("%s: %d %s", p, s, body)
		}
	}
	if a, err := st.Approvals().Get(context.Background(), ids["globex"]); err != nil || a.State != store.StatePending {
		t.Errorf("globex's request after acme's approver: %+v %v", a, err)
	}
	for _, p := range []string{"GET /connectors", "GET /tools", "GET /audit", "GET /tokens", "POST /tokens", "GET /upstreams", "GET /sessions"} {
		method, path, _ := strings.Cut(p, " ")
		if s, _ := adminCall(t, base, ann, method, path, "{}"); s != http.StatusForbidden {
			t.Errorf("%s by an approver: %d, want 403", p, s)
		}
	}
	if s, body := adminCall(t, base, ann, "POST", "/approvals/"+ids["acme"]+"/approve", ""); s != http.StatusOK {
		t.Errorf("acme's approver approving acme's request: %d %s", s, body)
	}
}

// The store keeps no tenant: a connector added "for" a tenant through the
// API would be shared, so it is refused.
func TestAdminConnectorForATenantIsRefused(t *testing.T) {
	st, url, _ := tenantInbox(t)
	base := strings.TrimSuffix(url, "/approvals")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	if s, body := adminCall(t, base, root, "POST", "/connectors", `{"id":"acme-only","type":"echo-test","tenant":"acme"}`); s != http.StatusBadRequest {
		t.Fatalf("%d %s", s, body)
	}
	if _, err := st.Connectors().Get(context.Background(), "acme-only"); err == nil {
		t.Error("stored all the same")
	}
}

// With authentication on, a session is listed with its principal and tenant.
func TestAdminSessionsNameTheirPrincipal(t *testing.T) {
	st, url, _ := tenantInbox(t)
	base := strings.TrimSuffix(url, "/approvals")
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	ann := token(t, st, auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleUser})
	mcpURL := strings.TrimSuffix(base, "/admin/v1") + "/mcp"
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: bearer{token: ann, base: http.DefaultTransport}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The server learns of the session from the client's initialized
	// notification, which Connect does not wait for.
	var body string
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		_, body = adminCall(t, base, root, "GET", "/sessions", "")
		return strings.Contains(body, `"principal": "ann"`) && strings.Contains(body, `"tenant": "acme"`)
	}, "sessions: %s", body)
}
