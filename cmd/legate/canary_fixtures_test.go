package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/webhook"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// swapStderr sends os.Stderr, where the CLI logs, to a file until the test
// ends, and returns the file's path.
func swapStderr(t *testing.T) string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = f
	t.Cleanup(func() { os.Stderr = old; f.Close() })
	return f.Name()
}

// gatedUpstream serves next only to requests bearing the Authorization
// value want. Once revoked it refuses that value with a 401 whose body
// echoes it, as a careless server would.
type gatedUpstream struct {
	want    string
	next    http.Handler
	revoked atomic.Bool
	granted atomic.Int64
}

func (g *gatedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	switch {
	case auth != g.want:
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	case g.revoked.Load():
		http.Error(w, `{"error":"token revoked","authorization":"`+auth+`"}`, http.StatusUnauthorized)
	default:
		g.granted.Add(1)
		g.next.ServeHTTP(w, r)
	}
}

// straddle returns head, padding, value starting at byte from, then tail:
// a cut a few bytes after from leaves only a prefix of value.
func straddle(head string, from int, value, tail string) string {
	pad := from - len(head)
	if pad < 1 {
		pad = 1
	}
	return head + strings.Repeat(".", pad) + value + tail
}

// formsOf is a JSON object holding secret in every form an echoing server
// may return it: plain, after a scheme in an error text, JSON-escaped (\/
// and \uXXXX), URL-encoded for a query and a path, and base64-encoded
// inside longer values in both alphabets.
func formsOf(secret string) []byte {
	uEscaped := strings.NewReplacer("/", `\u002f`, "+", `\u002b`, "-", `\u002d`).Replace(secret)
	return fmt.Appendf(nil, `{"plain":"%s","split":"invalid token: %s","json":"%s","u":"%s","query":"q=%s","path":"/p/%s/x","base64":"%s","base64url":"%s"}`,
		secret, secret, strings.ReplaceAll(secret, "/", `\/`), uEscaped, url.QueryEscape(secret), url.PathEscape(secret),
		base64.StdEncoding.EncodeToString([]byte("user:"+secret)), base64.RawURLEncoding.EncodeToString([]byte("t="+secret+"&")))
}

// echoForms answers the http connectors' paths that echo the caller's
// bearer token in encoded forms; ok is false for other paths.
func echoForms(w http.ResponseWriter, r *http.Request) (ok bool) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	forms := formsOf(token)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Echo-Base64", base64.StdEncoding.EncodeToString([]byte(token)))
	w.Header().Set("X-Echo-Query", url.QueryEscape(token))
	switch r.URL.Path {
	case "/forms":
	case "/gzip": // compressed when asked to, whoever asked
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			forms = connectortest.Gzip(forms)
		}
	case "/deflate": // compressed unasked
		w.Header().Set("Content-Encoding", "deflate")
		forms = connectortest.Zlib(forms)
	case "/gzip-file": // a file that happens to hold the token
		w.Header().Set("Content-Type", "application/gzip")
		forms = connectortest.Gzip(forms)
	case "/e403-forms":
		w.WriteHeader(http.StatusForbidden)
	default:
		return false
	}
	w.Write(forms)
	return true
}

// formsUpstream is a Streamable HTTP upstream that echoes the token of its
// Authorization header ("Bearer <token>"), split from its scheme, in every
// form of formsOf: in a result (forms, and forms_write, which is not
// read-only), a log message before it (log), a JSON-RPC error (rpc_error),
// a 401 answer's body (http_error), and a result compressed unasked
// (deflate, gzip).
type formsUpstream struct{}

func (formsUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(body, &msg)
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	text, _ := json.Marshal(string(formsOf(token)))
	answer := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, msg.ID, text)
	w.Header().Set("X-Echo", token)
	w.Header().Set("Content-Type", "application/json")
	// A session id, by which Legate routes a per_client session's log
	// messages to its client.
	w.Header().Set("Mcp-Session-Id", "forms-session")
	switch {
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"forms","version":"1"}}}`, msg.ID)
	case msg.Method == "tools/list":
		var tools []string
		for _, name := range []string{"forms", "log", "rpc_error", "http_error", "deflate", "gzip"} {
			tools = append(tools, `{"name":"`+name+`","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
		}
		tools = append(tools, `{"name":"forms_write","inputSchema":{"type":"object"}}`)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}`, msg.ID, strings.Join(tools, ","))
	case msg.Method != "tools/call":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	case msg.Params.Name == "log":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"error\",\"data\":%s}}\n\n", text)
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
	case msg.Params.Name == "rpc_error":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"invalid token: %s","data":%s}}`, msg.ID, token, formsOf(token))
	case msg.Params.Name == "http_error":
		http.Error(w, "invalid token: "+token, http.StatusUnauthorized)
	case msg.Params.Name == "deflate":
		w.Header().Set("Content-Encoding", "deflate")
		w.Write(connectortest.Zlib(answer))
	case msg.Params.Name == "gzip":
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(connectortest.Gzip(answer))
	default:
		w.Write(answer)
	}
}

// stdioSession runs `legate stdio` in process with args, on pipes in place
// of os.Stdin and os.Stdout (the testing package keeps its own copy of the
// latter), and returns a client session on it and a function that ends
// the server and returns its error. Everything the server writes is kept
// in p.
func stdioSession(t *testing.T, p *piece, args ...string) (*mcp.ClientSession, func() error) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldIn, oldOut := os.Stdin, os.Stdout
	os.Stdin, os.Stdout = inR, outW
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"stdio"}, args...))
		err := root.ExecuteContext(context.Background())
		p.Write(out.Bytes())
		outW.Close()
		done <- err
	}()
	tr := &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(outR, p)), Writer: inW}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "canary-stdio", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		os.Stdin, os.Stdout = oldIn, oldOut
		t.Fatal(err)
	}
	return cs, func() error {
		cs.Close()
		inW.Close()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			err = errors.New("legate stdio did not exit")
		}
		os.Stdin, os.Stdout = oldIn, oldOut
		inR.Close()
		outR.Close()
		return err
	}
}

// canaryAPI is the http connectors' API: it wants one of its tokens, and
// echoes the one it gets back in bodies, headers and errors, and in every
// encoded form (echoForms).
type canaryAPI struct {
	tokens  []canary // the bearer tokens it accepts
	other   string   // another origin's URL, which /redirect sends to
	mu      sync.Mutex
	counts  map[string]int // requests by the label of their token
	perUser []canary       // people's own tokens, issued as the test runs: accepted too
}

// accept adds a token issued to a person (a per-user connection's).
func (a *canaryAPI) accept(c canary) {
	a.mu.Lock()
	a.perUser = append(a.perUser, c)
	a.mu.Unlock()
}

// seen returns how many requests carried the token of the canary labelled label.
func (a *canaryAPI) seen(label string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[label]
}

func (a *canaryAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	token, from := strings.TrimPrefix(auth, "Bearer "), ""
	a.mu.Lock()
	accepted := slices.Concat(a.tokens, a.perUser)
	a.mu.Unlock()
	for _, c := range accepted {
		if auth == "Bearer "+c.value {
			from = c.label
		}
	}
	if from == "" {
		http.Error(w, "no or wrong token", http.StatusUnauthorized)
		return
	}
	a.mu.Lock()
	if a.counts == nil {
		a.counts = map[string]int{}
	}
	a.counts[from]++
	a.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	echo, _ := json.Marshal(map[string]any{"method": r.Method, "url": r.URL.String(), "headers": r.Header, "body": string(body)})
	w.Header().Set("X-Echo-Authorization", auth)
	w.Header().Add("X-Echo-Authorization", "again "+auth)
	w.Header().Set("X-Echo-Token", token)
	w.Header().Set("Set-Cookie", "session="+token)
	switch r.URL.Path {
	case "/", "/echo":
		w.Header().Set("Content-Type", "application/json")
		w.Write(echo)
	case "/text":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "Your request carried:\nAuthorization: %s\n", auth)
	case "/binary":
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(append(append([]byte{0, 1, 2}, auth...), 0xff, 0xfe))
	case "/big": // max_response_bytes is 2048: the cut falls inside the token
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, straddle("big:", 2048-20, auth, strings.Repeat("!", 100)))
	case "/e401": // error excerpts stop at 512 bytes: the second copy is cut there
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, straddle("token "+auth+" is not valid here:", 512-20, token, " end"))
	case "/e404":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write(echo)
	case "/e429":
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(echo)
	case "/e500":
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "panic: bad credential %q\n%s", auth, echo)
	case "/redirect": // to another origin: the token must not follow
		http.Redirect(w, r, a.other+"/landing", http.StatusFound)
	case "/redirect-token": // a Location carrying the token, to nowhere
		http.Redirect(w, r, "http://127.0.0.1:1/callback?access_token="+token, http.StatusFound)
	case "/api/v3/repos/acme/api/issues/7": // GitHub's API, echoing the header into a successful answer
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"number":7,"state":"open","title":%q,"body":%q,"user":{"login":"octo"},"html_url":"https://github.example/acme/api/issues/7"}`, auth, "token: "+token)
	case "/slow": // the instance's timeout is 500ms
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	default:
		if !echoForms(w, r) {
			http.NotFound(w, r)
		}
	}
}

// canaryHooks is the webhook receiver: /in checks the signature with the
// signing secret and the bearer token; /reject echoes the token in a 401.
type canaryHooks struct {
	signing, token string
	ok, rejected   atomic.Int64
}

func (h *canaryHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	switch r.URL.Path {
	case "/in":
		if err := webhook.Verify(h.signing, r.Header.Get(webhook.SignatureHeader), body, time.Minute, time.Now()); err != nil || auth != "Bearer "+h.token {
			http.Error(w, fmt.Sprintf("refused: %v", err), http.StatusUnauthorized)
			return
		}
		h.ok.Add(1)
		w.Header().Set("X-Echo-Authorization", auth)
		fmt.Fprintf(w, "received with %s", auth)
	case "/reject": // its excerpt stops at 512 bytes: the second copy is cut there
		h.rejected.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, straddle("token "+auth+" refused:", 512-20, h.token, " end"))
	}
}

// canaryUpstreams are the upstreams of the canary test, each requiring the
// canary header: "up" (an echo server with a prompt, a resource and a
// failing tool), "gone" (which the test stops) and formsUpstream.
type canaryUpstreams struct {
	up, gone, forms             *gatedUpstream
	upHTTP, goneHTTP, formsHTTP *upstreamtest.Server
}

func newCanaryUpstreams(t *testing.T, header string) *canaryUpstreams {
	t.Helper()
	upSrv := upstreamtest.NewEchoServer("up")
	upSrv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Say hello."}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	upSrv.AddResource(&mcp.Resource{URI: "test://canary/doc", Name: "doc", MIMEType: "text/plain"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "a document"}}}, nil
	})
	mcp.AddTool(upSrv, &mcp.Tool{Name: "boom", Description: "Fail."}, func(context.Context, *mcp.CallToolRequest, upstreamtest.EchoIn) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("upstream tool failed")
	})
	upstreamtest.CloseSessionsAtCleanup(t, upSrv)
	goneSrv := upstreamtest.NewEchoServer("gone")
	upstreamtest.CloseSessionsAtCleanup(t, goneSrv)
	u := &canaryUpstreams{
		up:    &gatedUpstream{want: header, next: upstreamtest.Handler(upSrv)},
		gone:  &gatedUpstream{want: header, next: upstreamtest.Handler(goneSrv)},
		forms: &gatedUpstream{want: header, next: formsUpstream{}},
	}
	u.upHTTP, u.goneHTTP, u.formsHTTP = upstreamtest.NewServer(t, u.up), upstreamtest.NewServer(t, u.gone), upstreamtest.NewServer(t, u.forms)
	return u
}

// canaryConfig is the canary test's config.yaml: http connectors with
// their token from the vault, the environment and a file; webhooks;
// upstreams with the canary header from the environment, one of them
// per_client.
func canaryConfig(apiURL, hooksURL string, ups *canaryUpstreams, tokenFile string) string {
	return fmt.Sprintf(`log_level: debug
call_timeout: 10s
connectors:
  - id: web
    type: http
    config: {base_url: %[1]q, allow_private_networks: true, timeout: 500ms, max_response_bytes: 2048}
    credentials:
      token: {vault: web-token}
  - id: webenv
    type: http
    config: {base_url: %[1]q, allow_private_networks: true, timeout: 500ms, max_response_bytes: 2048}
    credentials:
      token: {env: LEGATE_CANARY_ENV}
  - id: webfile
    type: http
    config: {base_url: %[1]q, allow_private_networks: true, timeout: 500ms, max_response_bytes: 2048}
    credentials:
      token: {file: %[7]q}
  - id: hooks
    type: webhook
    config: {url: %[2]q, allow_private_networks: true, max_attempts: 1}
    credentials:
      signing_secret: {vault: hook-signing}
      token: {vault: web-token}
  - id: hooks-bad
    type: webhook
    config: {url: %[3]q, allow_private_networks: true, max_attempts: 1}
    credentials:
      signing_secret: {vault: hook-signing}
      token: {vault: web-token}
upstreams:
  - {id: up, url: %[4]q, header_env: {Authorization: LEGATE_CANARY_UPSTREAM}}
  - {id: gone, url: %[5]q, header_env: {Authorization: LEGATE_CANARY_UPSTREAM}}
  - {id: forms, url: %[6]q, header_env: {Authorization: LEGATE_CANARY_UPSTREAM}}
  - {id: formspc, url: %[6]q, session: per_client, header_env: {Authorization: LEGATE_CANARY_UPSTREAM}}
policy:
  defaults: {read: allow, draft: approve, write: approve, destructive: approve}
  rules:
    - {connector: hooks, action: allow}
    - {connector: hooks-bad, action: allow}
    - {connector: box, action: allow}
    - {tool: legate.agent.run, action: allow}
approvals: {wait: 300ms, notify: hooks-bad}
`, apiURL, hooksURL+"/in", hooksURL+"/reject", ups.upHTTP.URL(), ups.goneHTTP.URL(), ups.formsHTTP.URL(), tokenFile)
}

// mcpCaller makes MCP calls and keeps each result as evidence, named by
// the front door of the session it went through (labels).
type mcpCaller struct {
	t      *testing.T
	ev     *evidence
	labels map[*mcp.ClientSession]string
}

// call calls a tool within 20s; a JSON-RPC error comes back as an error
// result whose text starts "JSON-RPC: ".
func (c *mcpCaller) call(s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{"progressToken": "p-" + name}})
	c.ev.addJSON(fmt.Sprintf("%s: MCP result of %s %v", c.labels[s], name, args), res, err)
	if err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "JSON-RPC: " + err.Error()}}}
	}
	return res
}

// errCode is the canonical code of an error result, "" for a success.
func errCode(res *mcp.CallToolResult) string {
	if !res.IsError {
		return ""
	}
	c, _, _ := strings.Cut(upstreamtest.Text(res), ":")
	return c
}

// echoes has every credential echoed in every form, compressed or not, by
// the http connectors' API (token from the vault, the environment, a
// file) and by an upstream (its header_env, split from its scheme), over
// session s: each result is decoded and masked, each refusal has its code.
func (c *mcpCaller) echoes(s *mcp.ClientSession) {
	t := c.t
	t.Helper()
	masked := func(what string, res *mcp.CallToolResult) {
		t.Helper()
		b, _ := json.Marshal(res)
		if res.IsError || !bytes.Contains(b, []byte("[redacted]")) || bytes.Contains(b, []byte("body_base64")) {
			t.Errorf("%s %s: %s, want a decoded result with the credential masked", c.labels[s], what, b)
		}
	}
	for _, conn := range []string{"web", "webenv", "webfile"} {
		for _, path := range []string{"/forms", "/gzip", "/deflate"} {
			masked(conn+".call "+path, c.call(s, conn+".call", map[string]any{"path": path}))
		}
		for args, want := range map[string]string{
			`{"path": "/gzip", "headers": {"Accept-Encoding": "gzip"}}`: "INVALID_ARGUMENT",
			`{"path": "/gzip-file"}`:                                    "ADAPTER_MAPPING_ERROR",
			`{"path": "/e403-forms"}`:                                   "PERMISSION_DENIED",
		} {
			var a map[string]any
			json.Unmarshal([]byte(args), &a)
			if got := errCode(c.call(s, conn+".call", a)); got != want {
				t.Errorf("%s %s.call %s: code %q, want %s", c.labels[s], conn, args, got, want)
			}
		}
	}
	for _, tool := range []string{"forms", "log", "deflate", "gzip"} {
		masked("mcp.forms."+tool, c.call(s, "mcp.forms."+tool, map[string]any{}))
	}
	for _, tool := range []string{"rpc_error", "http_error"} {
		if res := c.call(s, "mcp.forms."+tool, map[string]any{}); !res.IsError {
			t.Errorf("%s mcp.forms.%s: not an error", c.labels[s], tool)
		}
	}
}
