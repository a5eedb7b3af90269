package server_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
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
	claims := func(tenant string) map[string]any {
		c := d.Claims("alice")
		c["tenant"] = tenant
		c["role"] = "user"
		return c
	}
	aliceJWT := d.Sign(claims("acme"), d.Key)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	// Each case opens a session of its own, so that one case's DELETE
	// cannot hide another's; each differs from the owner in one part of
	// the identity.
	for name, tc := range map[string]struct{ owner, other string }{
		"a static token's session, a JWT of the same name and another tenant": {alice, d.Sign(claims("beta"), d.Key)},
		"a static token's session, a JWT of the same name and tenant":         {alice, aliceJWT},
		"a JWT's session, a JWT of the same name and another tenant":          {aliceJWT, d.Sign(claims("beta"), d.Key)},
	} {
		t.Run(name, func(t *testing.T) {
			hc := &http.Client{Transport: bearer{tc.owner, http.DefaultTransport}}
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for _, rpc := range []string{`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":10,"method":"ping"}`} {
				status, body := sessionRequest(t, "POST", url, cs.ID(), tc.other, rpc)
				if status < 400 || strings.Contains(body, "e__echo") || strings.Contains(body, `"result"`) {
					t.Errorf("%s on another identity's session: %d %s", rpc, status, body)
				}
			}
			if status, body := sessionRequest(t, "DELETE", url, cs.ID(), tc.other, ""); status < 400 {
				t.Errorf("DELETE of another identity's session: %d %s", status, body)
			}
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatalf("the owner's session after the attempts: %v", err)
			}
			if status, body := sessionRequest(t, "POST", url, cs.ID(), tc.owner, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`); status != http.StatusOK || !strings.Contains(body, `"result"`) {
				t.Fatalf("the owner on its session: %d %s", status, body)
			}
		})
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

// An authenticated session takes the fast paths once the SDK has it, as
// one without auth does; another identity's requests on it never do.
func TestAuthenticatedSessionsTakeTheFastPath(t *testing.T) {
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
	url := serve(t, gw)
	alice := token(t, st, auth.Principal{Name: "alice", Role: auth.RoleUser})
	bob := token(t, st, auth.Principal{Name: "bob", Role: auth.RoleUser})
	admin := token(t, st, auth.Principal{Name: "ops", Role: auth.RoleAdmin})
	fastLists := func() float64 {
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, `legate_fast_path_requests_total{method="tools/list"} `); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		return 0
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{alice, http.DefaultTransport}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	before := fastLists()
	waitFor(t, "the owner's lists on the fast path", func() bool {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return fastLists() > before
	})
	before = fastLists()
	if status, body := sessionRequest(t, "POST", url, cs.ID(), bob, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); status < 400 || strings.Contains(body, `"result"`) {
		t.Errorf("tools/list of another identity on the session: %d %s", status, body)
	}
	if n := fastLists() - before; n != 0 {
		t.Errorf("another identity's list took the fast path (%v)", n)
	}
}
