package server_test

// Done-when 6 of the issue: a client's bearer token never reaches an
// upstream. Upstreams record every header and body of every request they
// get while an authenticated client drives each proxied method through
// Legate; none may hold the client's token, and the only Authorization an
// upstream sees is the one its header_env configures.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// seenRequest is one request an upstream received.
type seenRequest struct {
	method, path string
	header       http.Header
	body         []byte
	rpc          []string // the JSON-RPC methods in the body
}

// headerRecorder keeps every request before passing it on.
type headerRecorder struct {
	next http.Handler
	mu   sync.Mutex
	reqs []seenRequest
}

func (h *headerRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	seen := seenRequest{method: r.Method, path: r.URL.RequestURI(), header: r.Header.Clone(), body: body, rpc: rpcMethods(body)}
	h.mu.Lock()
	h.reqs = append(h.reqs, seen)
	h.mu.Unlock()
	h.next.ServeHTTP(w, r)
}

func (h *headerRecorder) requests() []seenRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reqs)
}

// rpcMethods are the methods of a JSON-RPC message or batch.
func rpcMethods(body []byte) []string {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil && one.Method != "" {
		return []string{one.Method}
	}
	var batch []struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &batch)
	var out []string
	for _, m := range batch {
		if m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// passthroughViolations lists what in reqs breaks the rule: the client's
// token (or session id) anywhere in a request, or an Authorization header
// other than want ("" meaning none at all).
func passthroughViolations(reqs []seenRequest, clientToken, clientSession, want string) []string {
	var bad []string
	for _, r := range reqs {
		what := fmt.Sprintf("%s %s %v", r.method, r.path, r.rpc)
		for name, values := range r.header {
			for _, v := range values {
				if strings.Contains(v, clientToken) {
					bad = append(bad, fmt.Sprintf("%s: header %s carries the client's token", what, name))
				}
				if clientSession != "" && strings.Contains(v, clientSession) {
					bad = append(bad, fmt.Sprintf("%s: header %s carries the client's session id", what, name))
				}
			}
		}
		if bytes.Contains(r.body, []byte(clientToken)) {
			bad = append(bad, what+": the body carries the client's token")
		}
		if got := r.header.Values("Authorization"); want == "" && len(got) > 0 || want != "" && !slices.Equal(got, []string{want}) {
			bad = append(bad, fmt.Sprintf("%s: Authorization %q, want %q", what, got, want))
		}
	}
	return bad
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// passthroughUpstream is a go-sdk server with a tool, a prompt, a resource
// and a resource template, behind a header recorder.
func passthroughUpstream(t *testing.T, name string) (*mcp.Server, *headerRecorder, string) {
	t.Helper()
	srv := upstreamtest.NewEchoServer(name)
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + name}}}}, nil
	})
	uri := "test://" + name + "/doc"
	srv.AddResource(&mcp.Resource{URI: uri, Name: "doc"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "doc of " + name}}}, nil
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://" + name + "/items/{id}", Name: "item"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "item"}}}, nil
	})
	upstreamtest.CloseSessionsAtCleanup(t, srv)
	rec := &headerRecorder{next: upstreamtest.Handler(srv)}
	return srv, rec, upstreamtest.NewServer(t, rec).URL()
}

func TestClientTokenNoPassthroughToUpstreams(t *testing.T) {
	ctx := context.Background()
	upstreamAuth := "Bearer upstream-own-" + randomHex(t)
	t.Setenv("LEGATE_PASSTHROUGH_UPSTREAM_AUTH", upstreamAuth)

	// Every combination of session mode and header_env.
	type up struct {
		id, session string
		keyed       bool
		srv         *mcp.Server
		rec         *headerRecorder
	}
	ups := []*up{{id: "plain", session: "shared"}, {id: "keyed", session: "shared", keyed: true},
		{id: "pc", session: "per_client"}, {id: "pckeyed", session: "per_client", keyed: true}}
	doc := "auth: {tokens: true}\nupstreams:\n"
	for _, u := range ups {
		var url string
		u.srv, u.rec, url = passthroughUpstream(t, u.id)
		doc += fmt.Sprintf("  - {id: %s, url: %q, session: %s", u.id, url, u.session)
		if u.keyed {
			doc += ", header_env: {Authorization: LEGATE_PASSTHROUGH_UPSTREAM_AUTH}"
		}
		doc += "}\n"
	}
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := memStore(t)
	gw := upGateway(t, doc, st, log)
	waitCatalog(t, gw, "mcp.plain.echo", "mcp.keyed.echo", "mcp.pc.echo", "mcp.pckeyed.echo")
	url := serve(t, gw)
	clientToken := token(t, st, auth.Principal{Name: "alice", Role: auth.RoleUser})

	hc := &http.Client{Transport: bearer{clientToken, http.DefaultTransport}}
	connectAs := func(version string) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "passthrough", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connectAs("2025-11-25")
	stateless := connectAs("2026-07-28")
	sid := cs.ID()
	if sid == "" {
		t.Fatal("no session id")
	}

	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Errorf("logging/setLevel: %v", err)
	}
	names := toolNames(t, cs)
	for _, u := range ups {
		name := wire("mcp." + u.id + ".echo")
		if !slices.Contains(names, name) {
			t.Fatalf("tools/list %v lacks %s", names, name)
		}
		if res, _ := callText(t, cs, name, "hi "+u.id); res.IsError || upstreamtest.Text(res) != "hi "+u.id {
			t.Errorf("%s: %s", name, upstreamtest.Text(res))
		}
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != len(ups) {
		t.Fatalf("prompts/list: %v %v", prompts, err)
	}
	for _, p := range prompts.Prompts {
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name}); err != nil {
			t.Errorf("prompts/get %s: %v", p.Name, err)
		}
	}
	resources, err := cs.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) != len(ups) {
		t.Fatalf("resources/list: %v %v", resources, err)
	}
	for _, r := range resources.Resources {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI}); err != nil {
			t.Errorf("resources/read %s: %v", r.URI, err)
		}
	}
	if tpl, err := cs.ListResourceTemplates(ctx, nil); err != nil || len(tpl.ResourceTemplates) != len(ups) {
		t.Errorf("resources/templates/list: %v %v", tpl, err)
	}
	// A stateless client's requests are served on the HTTP request itself:
	// calls to the shared upstreams. (Not per_client ones: a session dialed
	// for a stateless request inherits its context, whose protocol version
	// the SDK's client transport sends upstream as Mcp-Protocol-Version
	// 2026-07-28, and a stateful upstream refuses the initialize.)
	toolNames(t, stateless)
	for _, u := range ups {
		if u.session == "shared" {
			if res, _ := callText(t, stateless, wire("mcp."+u.id+".echo"), "stateless"); res.IsError {
				t.Errorf("stateless call to %s: %s", u.id, upstreamtest.Text(res))
			}
		}
	}

	// A tools/list refresh prompted by the upstream's list_changed, and
	// one asked for, while the client is connected.
	for _, u := range ups {
		upstreamtest.AddEcho(u.srv, "later")
	}
	for _, u := range ups {
		if _, err := gw.Upstreams().Refresh(ctx, u.id); err != nil {
			t.Errorf("refresh %s: %v", u.id, err)
		}
	}
	for _, u := range ups {
		waitCatalog(t, gw, "mcp."+u.id+".later")
		if res, _ := callText(t, cs, wire("mcp."+u.id+".later"), "again"); res.IsError {
			t.Errorf("%s.later: %s", u.id, upstreamtest.Text(res))
		}
	}
	cs.Close()
	stateless.Close()
	// per_client sessions end with the client's: their DELETE is recorded too.
	upstreamtest.Eventually(t, 5*time.Second, func() bool {
		return upStatus(t, gw, "pc").Sessions == 0 && upStatus(t, gw, "pckeyed").Sessions == 0
	}, "per_client sessions not closed")

	for _, u := range ups {
		reqs := u.rec.requests()
		want := ""
		if u.keyed {
			want = upstreamAuth
		}
		for _, v := range passthroughViolations(reqs, clientToken, sid, want) {
			t.Errorf("upstream %s: %s", u.id, v)
		}
		// Every method was proxied to this upstream: the check covered them.
		var methods []string
		for _, r := range reqs {
			methods = append(methods, r.rpc...)
		}
		expected := []string{"initialize", "notifications/initialized", "tools/list", "tools/call", "prompts/list", "prompts/get",
			"resources/list", "resources/read", "resources/templates/list"}
		if u.session == "per_client" {
			expected = append(expected, "logging/setLevel") // forwarded to per_client sessions only
		}
		for _, m := range expected {
			if !slices.Contains(methods, m) {
				t.Errorf("upstream %s never received %s (received %v)", u.id, m, slices.Compact(slices.Sorted(slices.Values(methods))))
			}
		}
		t.Logf("upstream %s: %d requests checked", u.id, len(reqs))
	}
	if strings.Contains(logs.String(), clientToken) {
		t.Error("the client's token is in Legate's logs")
	}

	// The check would catch a token passed through: the same upstreams,
	// called directly with the client's token, fail it.
	_, rec, directURL := passthroughUpstream(t, "direct")
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	dcs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: directURL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dcs.ListTools(ctx, nil)
	dcs.Close()
	if len(passthroughViolations(rec.requests(), clientToken, "", "")) == 0 {
		t.Fatal("a request carrying the client's token passed the check")
	}
}

// formsOfToken is a text holding token in the forms a careless upstream
// echoes it: after the error text of a refusal, JSON-escaped (\/ and
// \uXXXX), URL-encoded and base64-encoded inside a longer value.
func formsOfToken(token string) string {
	return strings.Join([]string{
		"invalid token: " + token,
		`{"t":"` + strings.ReplaceAll(token, "/", `\/`) + `"}`,
		strings.NewReplacer("/", `\u002f`, "+", `\u002b`, "-", `\u002d`).Replace(token),
		"q=" + url.QueryEscape(token),
		base64.StdEncoding.EncodeToString([]byte("user:" + token)),
		base64.RawURLEncoding.EncodeToString([]byte("t=" + token + "&")),
	}, "\n")
}

// An upstream that echoes the token of its header_env credential, split
// from its scheme and encoded, in a result, a structured result and an
// error: every client sees it masked, whichever path the call takes (the
// gateway's own call, a relayed call on a session, a stateless call, a
// per_client upstream's SDK session).
func TestUpstreamEchoedTokenFormsAreMasked(t *testing.T) {
	token := "tok/" + randomHex(t) + "+x"
	t.Setenv("LEGATE_TEST_UPSTREAM_AUTH", "Bearer "+token)
	s := mcp.NewServer(&mcp.Implementation{Name: "echoer", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			got := strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")
			text := formsOfToken(got)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: map[string]any{"forms": text}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "refuse", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("%s", formsOfToken(strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")))
		})
	up := upstreamtest.NewHTTPServer(t, s)
	upstreamtest.CloseSessionsAtCleanup(t, s)
	gw := upGateway(t, "upstreams:\n"+
		"  - {id: up, url: "+up.URL()+", header_env: {Authorization: LEGATE_TEST_UPSTREAM_AUTH}}\n"+
		"  - {id: pc, url: "+up.URL()+", session: per_client, header_env: {Authorization: LEGATE_TEST_UPSTREAM_AUTH}}\n", memStore(t), nil)
	waitCatalog(t, gw, "mcp.up.whoami", "mcp.pc.whoami", "mcp.up.refuse")
	url := serve(t, gw)
	random := token[len("tok/") : len(token)-len("+x")]
	check := func(path, tool string, res any, err error) {
		t.Helper()
		b, _ := json.Marshal(res)
		if err != nil {
			b = fmt.Appendf(b, " error: %v", err)
		}
		leaked := strings.Contains(string(b), random)
		for _, f := range strings.Split(formsOfToken(token), "\n") {
			leaked = leaked || strings.Contains(string(b), f[4:len(f)-4])
		}
		if leaked || !strings.Contains(string(b), "[redacted]") {
			t.Errorf("%s, %s: the token reached the client: %s", path, tool, b)
		}
	}
	ctx := context.Background()
	for _, tool := range []string{"mcp.up.whoami", "mcp.up.refuse", "mcp.pc.whoami"} {
		res, err := gw.Call(ctx, tool, nil, server.CallOptions{})
		check("the gateway's call", tool, res, err)
	}
	sessions := map[string]*mcp.ClientSession{"relayed on a session": fastSession(t, url), "stateless": connect(t, url, "2026-07-28")}
	for path, cs := range sessions {
		for _, tool := range []string{"mcp.up.whoami", "mcp.up.refuse", "mcp.pc.whoami"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wire(tool)})
			check(path, tool, res, err)
		}
	}
}
