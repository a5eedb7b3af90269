package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/authtest"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// TestSessionsAreBoundToTheWholeIdentity: a session answers only the
// credential that opened it — principal, tenant and kind of credential —
// not any caller of the same name, on the fast path (tools/list), the SDK's
// (ping) and for DELETE.
func TestSessionsAreBoundToTheWholeIdentity(t *testing.T) {
	d := authtest.NewIDP(t)
	st := memStore(t)
	cfg, err := config.Parse([]byte(testConfig+d.Config("")), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	url := serve(t, gw)

	alice := token(t, st, auth.Principal{Name: "alice", Tenant: "acme", Role: auth.RoleUser})
	hc := &http.Client{Transport: bearer{alice, http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	claims := func(tenant string) map[string]any {
		c := d.Claims("alice")
		c["tenant"] = tenant
		c["role"] = "user"
		return c
	}
	others := map[string]string{
		"same name, another tenant, a JWT": d.Sign(claims("beta"), d.Key),
		"same name and tenant, a JWT":      d.Sign(claims("acme"), d.Key),
	}
	for name, tok := range others {
		t.Run(name, func(t *testing.T) {
			for _, rpc := range []string{`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":10,"method":"ping"}`} {
				status, body := sessionRequest(t, "POST", url, cs.ID(), tok, rpc)
				if status < 400 || strings.Contains(body, "e__echo") || strings.Contains(body, `"result"`) {
					t.Errorf("%s on another identity's session: %d %s", rpc, status, body)
				}
			}
			if status, body := sessionRequest(t, "DELETE", url, cs.ID(), tok, ""); status < 400 {
				t.Errorf("DELETE of another identity's session: %d %s", status, body)
			}
		})
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("the owner's session after the attempts: %v", err)
	}
	if status, body := sessionRequest(t, "POST", url, cs.ID(), alice, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`); status != http.StatusOK || !strings.Contains(body, "e__echo") {
		t.Fatalf("the owner on its session: %d %s", status, body)
	}
}

// sessionRequest sends one request on session sid with bearer tok.
func sessionRequest(t *testing.T, method, url, sid, tok, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
