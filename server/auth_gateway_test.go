package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

// bearer adds a token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func authGateway(t *testing.T) (*server.Gateway, *sqlite.Store, string) {
	t.Helper()
	st := memStore(t)
	cfg, err := config.Parse([]byte(testConfig+"auth: {tokens: true}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw, st, serve(t, gw)
}

func token(t *testing.T, st *sqlite.Store, p auth.Principal) string {
	t.Helper()
	tok, err := auth.CreateToken(context.Background(), st.Tokens(), p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAuthenticatedCallsCarryTheirPrincipal(t *testing.T) {
	_, st, url := authGateway(t)
	alice := token(t, st, auth.Principal{Name: "alice", Role: auth.RoleUser, Tenant: "acme"})
	bob := token(t, st, auth.Principal{Name: "bob", Role: auth.RoleUser, Tenant: "globex"})

	// No token, or a wrong one: 401 with a challenge.
	for _, tok := range []string{"", "lgt_wrong"} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("token %q: status %d, challenge %q", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	hc := &http.Client{Transport: bearer{alice, http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "e__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", res, err)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"principal":"alice"`) {
		t.Fatalf("the call did not carry its principal: %s", b)
	}

	// Alice's session with Bob's token is refused.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Authorization", "Bearer "+bob)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 || strings.Contains(string(body), "e__echo") {
		t.Fatalf("a session answered another principal: %d %s", resp.StatusCode, body)
	}
}

func TestAdminAPINeedsTheApproverRole(t *testing.T) {
	_, st, url := authGateway(t)
	admin := strings.TrimSuffix(url, "/mcp") + "/admin/v1/approvals"
	for name, tc := range map[string]struct {
		p    auth.Principal
		want int
	}{
		"user":     {auth.Principal{Name: "u", Role: auth.RoleUser}, http.StatusForbidden},
		"approver": {auth.Principal{Name: "a", Role: auth.RoleApprover}, http.StatusOK},
		"admin":    {auth.Principal{Name: "root", Role: auth.RoleAdmin}, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", admin, nil)
			req.Header.Set("Authorization", "Bearer "+token(t, st, tc.p))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			// The authenticator's refusal has the admin API's error format.
			if tc.want == http.StatusForbidden && (resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), `"code": "PERMISSION_DENIED"`)) {
				t.Errorf("refusal %s: %s", resp.Header.Get("Content-Type"), body)
			}
		})
	}
	resp, err := http.Get(admin)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"code": "UNAUTHENTICATED"`) || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: status %d %s (challenge %q)", resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
	}
}
