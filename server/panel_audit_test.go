package server_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
)

// The panel's page views are not audited, though they read every tenant's
// requests; its decisions are.
func TestPanelPageViewsAreNotAudited(t *testing.T) {
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pl.Addr().String()
	g := servertest.Start(t, "approvals: {wait: 10ms}\nauth: {tokens: true}\nconnectors:\n  - {id: s, type: echo-test}\n",
		servertest.With(func(o *server.Options) { o.PanelAddr, o.PanelListener = addr, pl }))
	base := "http://" + addr
	waitFor(t, "the panel to listen", func() bool {
		resp, err := http.Get(base + "/login")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	ctx := context.Background()
	// A request of tenant acme to decide.
	res, err := g.GW.Call(ctx, "s.fail", []byte(`{"text":"x"}`), server.CallOptions{Principal: &auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleUser}})
	if err != nil || resultCode(res) != "APPROVAL_PENDING" {
		t.Fatalf("the held call: %v %v", res, err)
	}
	id := res.StructuredContent.(map[string]any)["error"].(map[string]any)["approval_id"].(string)

	root := token(t, g.Store, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	c, _, csrf := panelLogin(t, base, root)
	for _, p := range []string{"/inbox", "/inbox/pending", "/audit", "/tools", "/connectors", "/upstreams", "/agent", "/inbox"} {
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		if readAll(t, resp); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", p, resp.Status)
		}
	}
	resp, err := c.PostForm(base+"/approvals/"+id+"/deny", url.Values{"reason": {"no"}, "csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	waitFor(t, "the audit row of the panel's decision", func() bool {
		rows, _ := g.Store.Audit().Query(ctx, store.AuditQuery{Principal: "root", Tool: "admin.approvals.deny"})
		return len(rows) == 1
	})
	rows, err := g.Store.Audit().Query(ctx, store.AuditQuery{Principal: "root", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Tool != "admin.approvals.deny" {
			t.Errorf("a page view of the panel was audited: %s %s %q", r.Tool, r.Class, r.Detail)
		}
	}
}
