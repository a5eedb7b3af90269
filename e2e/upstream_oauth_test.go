package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/internal/syncbuf"
)

// tsProtectedUpstream starts e2e/node/oauth-upstream.mjs, an MCP server
// protected by the TypeScript SDK's auth router and demo provider, and
// returns its URL and the access tokens it issues.
func (p *peerSet) tsProtectedUpstream(t *testing.T) (string, *syncbuf.Buffer) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("node", "oauth-upstream.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.node, script)
	cmd.Env = p.environ()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING ")
	if err != nil || !ok {
		t.Fatalf("oauth-upstream.mjs did not start: %q %v", line, err)
	}
	issued := &syncbuf.Buffer{}
	go io.Copy(issued, r)
	return u, issued
}

// bearer sets a static token on each request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// An OAuth-protected upstream (the TypeScript SDK's authorization
// support) is connected per principal through Legate: alice opens
// Legate's /connect/secure with her token and a scripted user agent
// follows the consent (the demo provider approves at once) back to
// Legate's callback; Legate discovered the server's metadata (RFC 9728,
// RFC 8414), registered itself (RFC 7591), and sent PKCE and the
// resource indicator. Then alice's tools/list has the upstream's tool and
// her call works with her token; bob, who has not connected, does not
// see it and his call answers NOT_CONNECTED with the connect URL; dave,
// whose client can open a URL, is asked to connect (auto_auth) and his
// call goes on once he has; no upstream token appears in any result or in
// Legate's log.
func TestOAuthProtectedUpstream(t *testing.T) {
	p := need(t)
	up, issued := p.tsProtectedUpstream(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`upstreams:
  - id: secure
    url: %s
    auth: oauth
  - id: listed
    url: %s
    auth: oauth
    list_before_connect: true
auth:
  tokens: true
  resource: http://127.0.0.1:%d/mcp
`, up, up, port)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	tokens := map[string]string{}
	for _, who := range []string{"alice", "bob", "carol", "dave"} {
		out := legateCLI(t, "token", "create", who, "--config", config, "--state-dir", state)
		tokens[who] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	s, err := startServeAt(t, config, state, nil, port)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + s.addr

	// alice connects both: Legate's connect URL, then the consent, as a
	// browser would.
	connect := func(who, id string) {
		t.Helper()
		page, err := legateBrowser(base, tokens[who]).Connect(base + "/connect/" + id)
		if err != nil || !strings.Contains(page, id+" is connected for "+who) {
			t.Fatalf("%s's consent to %s: %v: %s", who, id, err, page)
		}
	}
	connect("alice", "secure")
	connect("alice", "listed")

	session := func(who string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), HTTPClient: &http.Client{Transport: bearer{tokens[who]}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	alice, bob := session("alice"), session("bob")
	// The tools are listed through alice's session once she connected:
	// wait for the catalog to have them.
	var names []string
	for ctx.Err() == nil {
		names = names[:0]
		lt, err := alice.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		if all := strings.Join(names, " "); strings.Contains(all, "mcp__secure__whoami") && strings.Contains(all, "mcp__listed__whoami") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if all := strings.Join(names, " "); !strings.Contains(all, "mcp__secure__whoami") || !strings.Contains(all, "mcp__listed__whoami") {
		t.Fatalf("alice's tools never had mcp__secure__whoami and mcp__listed__whoami: %v", names)
	}
	call, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__secure__whoami", Arguments: map[string]any{}})
	if err != nil || call.IsError {
		t.Fatalf("alice's call: %+v %v", call, err)
	}
	text := call.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"resource":"`+up+`"`) || !strings.Contains(text, `"client_id":"`) {
		t.Errorf("alice's call did not carry a token issued for %s to Legate's client: %s", up, text)
	}

	// bob has connected neither: he does not see secure's tools; he sees
	// listed's (list_before_connect), and calling one asks him to connect.
	lt, err := bob.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var bobs []string
	for _, tl := range lt.Tools {
		bobs = append(bobs, tl.Name)
	}
	if all := strings.Join(bobs, " "); strings.Contains(all, "mcp__secure__") || !strings.Contains(all, "mcp__listed__whoami") {
		t.Errorf("bob's tools: %v; want mcp__listed__whoami and nothing of secure", bobs)
	}
	bobCall, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__listed__whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	bobText := ""
	if len(bobCall.Content) > 0 {
		bobText = bobCall.Content[0].(*mcp.TextContent).Text
	}
	if !bobCall.IsError || !strings.Contains(bobText, "NOT_CONNECTED") || !strings.Contains(bobText, base+"/connect/listed") {
		t.Errorf("bob's call of listed's tool: %q, want NOT_CONNECTED with %s/connect/listed", bobText, base)
	}
	// A caller not connected is no failure of the upstream: more such
	// calls than open its circuit (5) leave alice's working.
	for range 6 {
		bob.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__listed__whoami", Arguments: map[string]any{}})
	}
	if again, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__listed__whoami", Arguments: map[string]any{}}); err != nil || again.IsError {
		t.Errorf("alice's call of listed's tool after bob's: %+v %v", again, err)
	}

	// `legate connections list` shows alice's connections, never a token;
	// once she revokes hers to secure, her calls to it ask her to
	// connect; connected again (a new token), her calls work again, on a
	// new session (the server holds each session to the token that opened
	// it).
	listed := string(legateCLI(t, "connections", "list", "--config", config, "--state-dir", state))
	if !strings.Contains(listed, "secure") || !strings.Contains(listed, "alice") {
		t.Errorf("legate connections list: %s", listed)
	}
	legateCLI(t, "connections", "revoke", "secure", "--principal", "alice", "--config", config, "--state-dir", state)
	revoked, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__secure__whoami", Arguments: map[string]any{}})
	if err != nil || !revoked.IsError || !strings.Contains(revoked.Content[0].(*mcp.TextContent).Text, "NOT_CONNECTED") {
		t.Errorf("alice's call after she revoked her connection: %+v %v, want NOT_CONNECTED", revoked, err)
	}
	connect("alice", "secure")
	if again, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__secure__whoami", Arguments: map[string]any{}}); err != nil || again.IsError {
		t.Errorf("alice's call once connected again: %+v %v", again, err)
	}

	// carol connects with `legate connect secure`, another process than
	// the server whose callback completes it: it prints the consent URL
	// and waits; the user agent opens it.
	cli := exec.CommandContext(ctx, legateBin, "connect", "secure", "--principal", "carol", "--config", config, "--state-dir", state)
	cli.Dir = t.TempDir()
	cliOut, err := cli.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cliErr := &syncbuf.Buffer{}
	cli.Stderr = cliErr
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(cliOut)
	var printed strings.Builder
	for lines.Scan() {
		printed.WriteString(lines.Text() + "\n")
		if u, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), "http"); ok {
			// Legate's page names carol; her browser goes on from its form.
			if body, err := oauthtest.NewBrowser("carol").Connect("http" + u); err != nil {
				t.Errorf("carol's consent: %v\n%s", err, body)
			}
		}
	}
	if err := cli.Wait(); err != nil || !strings.Contains(printed.String(), "connected: secure for carol") {
		t.Fatalf("legate connect secure: %v\n%s%s", err, printed.String(), cliErr)
	}
	carol := session("carol")
	if res, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__secure__whoami", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("carol's call once connected with legate connect: %+v %v", res, err)
	}

	// dave has not connected listed either, and his client can open a URL
	// (URL-mode elicitation): his call asks him to connect (auto_auth), his
	// user agent consents (the upstream issues his token, counted below),
	// and the call goes on.
	var mu sync.Mutex // the handler runs on the client's goroutine
	var asked []string
	var consent error
	dc := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params.URL)
			page, err := legateBrowser(base, tokens["dave"]).Connect(req.Params.URL)
			if err == nil && !strings.Contains(page, "listed is connected for dave") {
				err = fmt.Errorf("the consent ended with: %s", page)
			}
			consent = err
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	dave, err := dc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), HTTPClient: &http.Client{Transport: bearer{tokens["dave"]}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dave.Close()
	daveCall, err := dave.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__listed__whoami", Arguments: map[string]any{}})
	mu.Lock()
	defer mu.Unlock()
	if err != nil || consent != nil || len(asked) != 1 || asked[0] != base+"/connect/listed" {
		t.Fatalf("dave's call: %v; asked %v; consent: %v", err, asked, consent)
	}
	daveText := daveCall.Content[0].(*mcp.TextContent).Text
	if daveCall.IsError || !strings.Contains(daveText, `"resource":"`+up+`"`) {
		t.Errorf("dave's call once connected: %s", daveText)
	}

	// The upstream's tokens appear in no result and not in Legate's log.
	toks := strings.Fields(strings.ReplaceAll(issued.String(), "ISSUED", ""))
	if len(toks) != 5 {
		t.Fatalf("the upstream issued %d tokens, want 5 (alice's to secure twice and to listed, carol's, dave's): %q", len(toks), issued)
	}
	if strings.Contains(listed, toks[0]) {
		t.Error("legate connections list shows a token")
	}
	for _, tok := range toks {
		for _, where := range []string{s.stderr.String(), text, bobText, daveText} {
			if strings.Contains(where, tok) {
				t.Errorf("an upstream token appears in a result or Legate's log")
			}
		}
	}
}

// legateBrowser is a person's browser (cookies of its own) signed in to
// Legate at base with token, whose user is approved at once by the
// upstream's authorization server.
func legateBrowser(base, token string) *oauthtest.Browser {
	b := oauthtest.NewBrowser("")
	b.Client.Transport = bearerOnLegate{base: base, token: token}
	return b
}

// bearerOnLegate sets alice's token on requests to Legate only, never on
// the upstream's authorization server a redirect leads to.
type bearerOnLegate struct{ base, token string }

func (b bearerOnLegate) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.String(), b.base+"/") {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}
