package main

// Done-when 2 of the issue: a canary secret used by connectors (from the
// vault) and by an upstream header (from the environment) never appears
// in any HTTP response, MCP result or error, log line, audit row, CLI
// output or stored byte other than its ciphertext. The test plants the
// canaries, drives every path it can reach — the targets echo the
// credentials back to tempt Legate — keeps everything Legate said, and
// scans it all at the end.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/webhook"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
	"github.com/legate-mcp/legate/vault"
)

// canary is a secret value planted by a test, and the forms in which a
// leak of it would show: whole, its random part, a piece or a prefix of it
// (cut by truncation), and encoded (hex, base64 at every alignment).
type canary struct {
	label, value string
	needles      []needle
}

type needle struct {
	form string
	b    []byte
}

// pieceLen is the shortest run of a canary's random hex digits counted as
// a leak: 48 bits, which do not turn up by chance in megabytes of hashes,
// ids and ciphertext.
const pieceLen = 12

func newCanary(t testing.TB, label string) canary {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	random := hex.EncodeToString(b)
	prefix := "CANARY-" + label + "-"
	c := canary{label: label, value: prefix + random}
	add := func(form, s string) { c.needles = append(c.needles, needle{form, []byte(s)}) }
	add("in the clear", c.value)
	add("its random part", random)
	for k := pieceLen - 1; k >= 4; k-- { // the longest first, to report what leaked
		add(fmt.Sprintf("a prefix cut after %d random characters", k), prefix+random[:k])
	}
	for i := 0; i+pieceLen <= len(random); i++ {
		add(fmt.Sprintf("random characters %d-%d", i, i+pieceLen), random[i:i+pieceLen])
	}
	add("hex-encoded", hex.EncodeToString([]byte(c.value)))
	add("hex-encoded (upper case)", strings.ToUpper(hex.EncodeToString([]byte(c.value))))
	for _, enc := range []struct {
		name string
		e    *base64.Encoding
	}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}} {
		// Inside a longer encoded string the canary's characters depend on
		// its offset modulo 3; drop the groups it shares with its neighbours.
		for off := range 3 {
			s := enc.e.EncodeToString(append(make([]byte, off), c.value...))
			start := 0
			if off > 0 {
				start = 4
			}
			add(fmt.Sprintf("%s-encoded (offset %d)", enc.name, off), s[start:len(s)-4])
		}
	}
	return c
}

// hit is where a canary was found.
type hit struct {
	canary, form, where string
	offset              int
	context             string
}

func (h hit) String() string {
	return fmt.Sprintf("canary %s (%s) in %s at byte %d: …%s…", h.canary, h.form, h.where, h.offset, h.context)
}

// find returns the first form of c in data.
func (c canary) find(where string, data []byte) (hit, bool) {
	for _, n := range c.needles {
		if i := bytes.Index(data, n.b); i >= 0 {
			lo, hi := max(0, i-80), min(len(data), i+len(n.b)+80)
			return hit{canary: c.label, form: n.form, where: where, offset: i, context: fmt.Sprintf("%q", data[lo:hi])}, true
		}
	}
	return hit{}, false
}

// evidence is everything Legate said or stored during a test, each piece
// named by where it came from. Pieces may grow while the test runs (a
// response stream, a log).
type evidence struct {
	mu    sync.Mutex
	items []*piece
}

type piece struct {
	where string
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (p *piece) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *piece) Bytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.buf.Bytes())
}

func (e *evidence) open(where string) *piece {
	p := &piece{where: where}
	e.mu.Lock()
	e.items = append(e.items, p)
	e.mu.Unlock()
	return p
}

func (e *evidence) add(where string, data []byte) { e.open(where).Write(data) }

// addJSON keeps v as JSON, and err's text.
func (e *evidence) addJSON(where string, v any, err error) {
	b, mErr := json.Marshal(v)
	if mErr != nil {
		b = fmt.Appendf(nil, "%#v", v)
	}
	if err != nil {
		b = fmt.Appendf(b, "\nerror: %v", err)
	}
	e.add(where, b)
}

// addDir keeps every file under dir as it is now.
func (e *evidence) addDir(t *testing.T, dir, phase string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil // a -wal or -shm file removed meanwhile
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		e.add(fmt.Sprintf("state file %s (%s)", rel, phase), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scan looks for every canary in every piece; it returns the hits and how
// many pieces and bytes it read.
func (e *evidence) scan(cs ...canary) (hits []hit, pieces, n int) {
	e.mu.Lock()
	items := slices.Clone(e.items)
	e.mu.Unlock()
	for _, p := range items {
		b := p.Bytes()
		n += len(b)
		for _, c := range cs {
			if h, ok := c.find(p.where, b); ok {
				hits = append(hits, h)
			}
		}
	}
	return hits, len(items), n
}

// dump writes every piece to a file in dir, for a person to read; an
// empty dir writes nothing.
func (e *evidence) dump(t *testing.T, dir string) {
	if dir == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, p := range e.items {
		name := fmt.Sprintf("%03d-%s", i, regexp.MustCompile(`[^A-Za-z0-9.-]+`).ReplaceAllString(p.where, "_"))
		if err := os.WriteFile(filepath.Join(dir, name[:min(len(name), 120)]), p.Bytes(), 0o600); err != nil {
			t.Error(err)
		}
	}
}

// record keeps every response of h: status, headers and body.
func (e *evidence) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := e.open(fmt.Sprintf("Legate's HTTP response to %s %s", r.Method, r.URL.RequestURI()))
		rw := &recordingWriter{ResponseWriter: w, p: p}
		h.ServeHTTP(rw, r)
		rw.head(0) // headers set after the body, trailers included
	})
}

type recordingWriter struct {
	http.ResponseWriter
	p     *piece
	wrote bool
}

func (w *recordingWriter) head(status int) {
	var b bytes.Buffer
	if status != 0 {
		fmt.Fprintf(&b, "HTTP %d\n", status)
	}
	w.Header().Write(&b)
	b.WriteString("\n")
	w.p.Write(b.Bytes())
}

func (w *recordingWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.head(status)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		w.head(http.StatusOK)
	}
	w.p.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recordingTransport keeps every response a client receives.
type recordingTransport struct {
	ev   *evidence
	base http.RoundTripper
}

func (t recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	p := t.ev.open(fmt.Sprintf("`legate serve` HTTP response to %s %s", r.Method, r.URL.RequestURI()))
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP %d\n", resp.StatusCode)
	resp.Header.Write(&b)
	b.WriteString("\n")
	p.Write(b.Bytes())
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, p), resp.Body}
	return resp, nil
}

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

func TestCanarySecretsNeverLeak(t *testing.T) {
	start := time.Now()
	ctx := context.Background()
	tok := newCanary(t, "TOKEN")   // vault web-token: http bearer token, webhook token
	sig := newCanary(t, "SIGNING") // vault hook-signing: webhook signing_secret
	up := newCanary(t, "UPSTREAM") // $LEGATE_CANARY_UPSTREAM: an upstream's Authorization header
	adm := newCanary(t, "ADMIN")   // $LEGATE_ADMIN_TOKEN: the admin API's bearer token
	canaries := []canary{tok, sig, up, adm}
	adminToken := adm.value

	t.Setenv(vault.EnvMasterKey, "")
	t.Setenv(vault.EnvKeyFile, "")
	t.Setenv("LEGATE_STATE_DIR", "")
	t.Setenv("LEGATE_CANARY_UPSTREAM", "Bearer "+up.value)
	t.Setenv("LEGATE_ADMIN_TOKEN", adminToken)
	stderr := swapStderr(t)
	ev := &evidence{}

	// The http connector's API: it wants the token, and echoes it back in
	// bodies, headers and errors.
	var other atomic.Int64 // requests that reached the other origin with the token
	otherOrigin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(r.Header)
		if bytes.Contains(b, []byte(tok.value)) {
			other.Add(1)
		}
		w.Write(b)
	}))
	defer otherOrigin.Close()
	var apiOK atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+tok.value {
			http.Error(w, "no or wrong token", http.StatusUnauthorized)
			return
		}
		apiOK.Add(1)
		body, _ := io.ReadAll(r.Body)
		echo, _ := json.Marshal(map[string]any{"method": r.Method, "url": r.URL.String(), "headers": r.Header, "body": string(body)})
		w.Header().Set("X-Echo-Authorization", auth)
		w.Header().Add("X-Echo-Authorization", "again "+auth)
		w.Header().Set("X-Echo-Token", tok.value)
		w.Header().Set("Set-Cookie", "session="+tok.value)
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
			io.WriteString(w, straddle("token "+auth+" is not valid here:", 512-20, tok.value, " end"))
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
			http.Redirect(w, r, strings.Replace(otherOrigin.URL, "127.0.0.1", "localhost", 1)+"/landing", http.StatusFound)
		case "/redirect-token": // a Location carrying the token, to nowhere
			http.Redirect(w, r, "http://127.0.0.1:1/callback?access_token="+tok.value, http.StatusFound)
		case "/slow": // the instance's timeout is 500ms
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()

	// The webhook receiver checks the signature with the signing secret and
	// the bearer token; /reject echoes the token in a 401.
	var hookOK, hookRejected atomic.Int64
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/in":
			if err := webhook.Verify(sig.value, r.Header.Get(webhook.SignatureHeader), body, time.Minute, time.Now()); err != nil || auth != "Bearer "+tok.value {
				http.Error(w, fmt.Sprintf("refused: %v", err), http.StatusUnauthorized)
				return
			}
			hookOK.Add(1)
			w.Header().Set("X-Echo-Authorization", auth)
			fmt.Fprintf(w, "received with %s", auth)
		case "/reject": // its excerpt stops at 512 bytes: the second copy is cut there
			hookRejected.Add(1)
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, straddle("token "+auth+" refused:", 512-20, tok.value, " end"))
		}
	}))
	defer hooks.Close()

	// Upstreams: "up" requires the canary header; "gone" too, and stops.
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
	upGate := &gatedUpstream{want: "Bearer " + up.value, next: upstreamtest.Handler(upSrv)}
	upHTTP := upstreamtest.NewServer(t, upGate)
	goneSrv := upstreamtest.NewEchoServer("gone")
	upstreamtest.CloseSessionsAtCleanup(t, goneSrv)
	goneGate := &gatedUpstream{want: "Bearer " + up.value, next: upstreamtest.Handler(goneSrv)}
	goneHTTP := upstreamtest.NewServer(t, goneGate)

	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cfgPath := filepath.Join(dir, "config.yaml")
	doc := fmt.Sprintf(`log_level: debug
call_timeout: 10s
connectors:
  - id: web
    type: http
    config: {base_url: %q, allow_private_networks: true, timeout: 500ms, max_response_bytes: 2048}
    credentials:
      token: {vault: web-token}
  - id: hooks
    type: webhook
    config: {url: %q, allow_private_networks: true, max_attempts: 1}
    credentials:
      signing_secret: {vault: hook-signing}
      token: {vault: web-token}
  - id: hooks-bad
    type: webhook
    config: {url: %q, allow_private_networks: true, max_attempts: 1}
    credentials:
      signing_secret: {vault: hook-signing}
      token: {vault: web-token}
upstreams:
  - {id: up, url: %q, header_env: {Authorization: LEGATE_CANARY_UPSTREAM}}
  - {id: gone, url: %q, header_env: {Authorization: LEGATE_CANARY_UPSTREAM}}
policy:
  defaults: {read: allow, draft: approve, write: approve, destructive: approve}
  rules:
    - {connector: hooks, action: allow}
    - {connector: hooks-bad, action: allow}
approvals: {wait: 300ms, notify: hooks-bad}
`, api.URL, hooks.URL+"/in", hooks.URL+"/reject", upHTTP.URL(), goneHTTP.URL())
	if err := os.WriteFile(cfgPath, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}

	// cli runs one command in process and keeps its output (logs go to
	// the stderr file, kept at the end).
	cli := func(stdin string, args ...string) (string, error) {
		t.Helper()
		args = append(args, "--config", cfgPath, "--state-dir", state, "--log-level", "debug")
		out, err := legateIn(t, stdin, args...)
		kept := out
		if err != nil {
			kept += "\nerror: " + err.Error()
		}
		ev.add("output of `legate "+strings.Join(args[:len(args)-6], " ")+"`", []byte(kept))
		return out, err
	}
	mustCLI := func(stdin string, args ...string) string {
		t.Helper()
		out, err := cli(stdin, args...)
		if err != nil {
			t.Fatalf("legate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	// 1. The secrets go into the vault from stdin.
	mustCLI(tok.value+"\n", "vault", "set", "web-token")
	mustCLI(sig.value, "vault", "set", "hook-signing")
	mustCLI("", "config", "validate")
	mustCLI("", "connector", "list")
	cli("", "connector", "test")
	mustCLI("", "upstream", "test", "up")
	mustCLI("", "upstream", "refresh")
	mustCLI("", "upstream", "list", "--json")
	mustCLI("", "tools", "list", "--json")
	mustCLI("", "vault", "list", "--json")
	mustCLI("", "vault", "list", "--all")
	if out := mustCLI("", "tools", "call", "web.call", "--args", `{"path": "/echo"}`); !strings.Contains(out, "[redacted]") {
		t.Errorf("the CLI call's echo was not redacted, or did not come back:\n%s", out)
	}
	cli("", "tools", "call", "web.call", "--args", `{"path": "/e401"}`)
	cli("", "tools", "call", "web.call", "--args", `{"path": "/binary"}`)
	cli("", "tools", "call", "hooks.send", "--args", `{"payload": {"from": "cli"}}`)
	cli("", "tools", "call", "hooks-bad.send", "--args", `{"payload": {"from": "cli"}}`)
	cli("", "tools", "call", "mcp.up.echo", "--args", `{"text": "from the cli"}`)
	ev.addDir(t, state, "after the CLI set-up")

	// 2. A server on the same state directory, built as `legate serve`
	// builds it, logging at debug level into the evidence.
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logs := ev.open("the server's logs (debug)")
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := &env{cfg: cfg, stateDir: state, store: st, log: log,
		vault: vault.New(st.Secrets(), vault.SourceFromEnv(os.Getenv, state), &vault.Options{Logger: log})}
	if err := e.vault.LoadKeys(); err != nil {
		t.Fatal(err)
	}
	gw, err := e.gateway(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	srvCtx, stopSrv := context.WithCancel(ctx)
	defer stopSrv()
	gw.Start(srvCtx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: ev.record(gw.Handler(ln.Addr().String()))}}
	srv.Start()
	defer srv.Close()
	base := srv.URL

	notes := ev.open("notifications the MCP client received")
	client := mcp.NewClient(&mcp.Implementation{Name: "canary", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params)
			notes.Write(append(b, '\n'))
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			b, _ := json.Marshal(r.Params)
			notes.Write(append(b, '\n'))
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	stateless, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer stateless.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}

	call := func(s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{"progressToken": "p-" + name}})
		ev.addJSON(fmt.Sprintf("MCP result of %s %v", name, args), res, err)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "JSON-RPC: " + err.Error()}}}
		}
		return res
	}
	code := func(res *mcp.CallToolResult) string {
		if !res.IsError {
			return ""
		}
		c, _, _ := strings.Cut(upstreamtest.Text(res), ":")
		return c
	}
	keep := func(where string, v any, err error) { ev.addJSON(where, v, err) }

	// 3. Lists, then every kind of call, successful and failing.
	tools, err := cs.ListTools(ctx, nil)
	keep("MCP tools/list", tools, err)
	l2, err := stateless.ListTools(ctx, nil)
	keep("MCP tools/list (stateless)", l2, err)
	waitUntil(t, "the upstreams' tools in the catalog", func() bool {
		_, a := gw.Catalog().Lookup("mcp.up.echo")
		_, b := gw.Catalog().Lookup("mcp.gone.echo")
		return a && b
	})
	prompts, err := cs.ListPrompts(ctx, nil)
	keep("MCP prompts/list", prompts, err)
	if err == nil && len(prompts.Prompts) > 0 {
		p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompts.Prompts[0].Name})
		keep("MCP prompts/get", p, err)
	}
	resources, err := cs.ListResources(ctx, nil)
	keep("MCP resources/list", resources, err)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://canary/doc"})
	keep("MCP resources/read", rr, err)

	for _, path := range []string{"/echo", "/text", "/binary", "/big"} {
		if res := call(cs, "web.call", map[string]any{"path": path}); res.IsError {
			t.Errorf("web.call %s: %s", path, upstreamtest.Text(res))
		}
	}
	if res := call(cs, "web.call", map[string]any{"path": "/echo", "method": "HEAD"}); res.IsError {
		t.Errorf("HEAD: %s", upstreamtest.Text(res))
	}
	if b, _ := json.Marshal(call(stateless, "web__call", map[string]any{"path": "/echo"})); !bytes.Contains(b, []byte("[redacted]")) {
		t.Errorf("the echoed token was not redacted, or the echo did not come back: %s", b)
	}
	for path, want := range map[string]string{
		"/e401": "AUTH_EXPIRED", "/e404": "NOT_FOUND", "/e429": "RATE_LIMITED", "/e500": "TRANSIENT",
		"/slow": "TIMEOUT", "/redirect-token": "TRANSIENT",
	} {
		if got := code(call(cs, "web.call", map[string]any{"path": path})); got != want {
			t.Errorf("web.call %s: code %q, want %s", path, got, want)
		}
	}
	call(cs, "web.call", map[string]any{"path": "/redirect"})
	call(cs, "web.call", map[string]any{"path": "/echo", "headers": map[string]any{"Authorization": "Bearer mine"}})
	call(cs, "web.call", map[string]any{"nope": true})
	call(cs, "no.such.tool", map[string]any{})
	call(cs, "http.request", map[string]any{"url": api.URL + "/echo"}) // private: refused, and without credentials anyway
	if res := call(cs, "hooks.send", map[string]any{"payload": map[string]any{"n": 1}, "event": "canary.test"}); res.IsError {
		t.Errorf("hooks.send: %s", upstreamtest.Text(res))
	}
	if got := code(call(cs, "hooks-bad.send", map[string]any{"payload": map[string]any{"n": 2}})); got != "AUTH_EXPIRED" && got != "PERMISSION_DENIED" && got != "INVALID_ARGUMENT" {
		t.Errorf("hooks-bad.send: code %q", got)
	}
	if res := call(cs, "mcp.up.echo", map[string]any{"text": "through legate"}); upstreamtest.Text(res) != "through legate" {
		t.Errorf("mcp.up.echo: %s", upstreamtest.Text(res))
	}
	call(cs, "mcp.up.boom", map[string]any{"text": "x"})

	// 4. Approvals: one approved through the admin API and run by the
	// executor, one approved with the CLI, one denied.
	admin := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
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
	pending := func(args map[string]any) string {
		t.Helper()
		res := call(cs, "web.call", args)
		if code(res) != "APPROVAL_PENDING" {
			t.Fatalf("%v: %s, want APPROVAL_PENDING", args, upstreamtest.Text(res))
		}
		id := regexp.MustCompile(`approval (\S+) \(state`).FindStringSubmatch(upstreamtest.Text(res))
		if id == nil {
			t.Fatalf("no approval id in %q", upstreamtest.Text(res))
		}
		return id[1]
	}
	post := map[string]any{"method": "POST", "path": "/echo", "json": map[string]any{"order": 42}}
	put := map[string]any{"method": "PUT", "path": "/echo", "body": "replace"}
	del := map[string]any{"method": "DELETE", "path": "/echo"}
	idPost, idPut, idDel := pending(post), pending(put), pending(del)
	mustCLI("", "approvals", "list", "--all", "--json")
	mustCLI("", "approvals", "show", idPost)
	for _, p := range []string{"/admin/v1/approvals", "/admin/v1/approvals?state=pending", "/admin/v1/approvals/" + idPost} {
		if status, _ := admin("GET", p, adminToken, ""); status != http.StatusOK {
			t.Errorf("GET %s: %d", p, status)
		}
	}
	admin("GET", "/admin/v1/approvals", "", "")
	admin("GET", "/admin/v1/approvals", "wrong", "")
	admin("POST", "/admin/v1/approvals/"+idPost+"/approve", "wrong", "")
	if status, body := admin("POST", "/admin/v1/approvals/"+idPost+"/approve", adminToken, `{"reason": "looks fine"}`); status != http.StatusOK {
		t.Fatalf("approve: %d %s", status, body)
	}
	mustCLI("", "approvals", "approve", idPut, "--reason", "ok")
	if status, body := admin("POST", "/admin/v1/approvals/"+idDel+"/deny", adminToken, `{"reason": "no"}`); status != http.StatusOK {
		t.Fatalf("deny: %d %s", status, body)
	}
	for _, id := range []string{idPost, idPut} {
		waitUntil(t, "approval "+id+" to run", func() bool {
			res := call(cs, "legate.approval_status", map[string]any{"approval_id": id})
			b, _ := json.Marshal(res.StructuredContent)
			return bytes.Contains(b, []byte(`"state":"executed"`))
		})
		admin("GET", "/admin/v1/approvals/"+id, adminToken, "")
	}
	if res := call(cs, "web.call", post); res.IsError {
		t.Errorf("the approved call, made again: %s", upstreamtest.Text(res))
	}
	if got := code(call(cs, "web.call", del)); got != "APPROVAL_DENIED" {
		t.Errorf("the denied call, made again: %q", got)
	}
	admin("GET", "/admin/v1/approvals?state=executed", adminToken, "")

	// 5. Upstream failures: one gone, one refusing (and echoing) the header.
	goneHTTP.Stop()
	var unavailable bool
	for range 8 {
		if code(call(cs, "mcp.gone.echo", map[string]any{"text": "x"})) == "UPSTREAM_UNAVAILABLE" {
			unavailable = true
			break
		}
	}
	if !unavailable {
		t.Error("calls to a stopped upstream never failed with UPSTREAM_UNAVAILABLE")
	}
	upGate.revoked.Store(true)
	call(cs, "mcp.up.echo", map[string]any{"text": "revoked"})
	d, err := gw.Upstreams().Refresh(ctx, "up")
	keep("Refresh(up) with the header refused", d, err)
	cli("", "upstream", "refresh", "up")
	cli("", "upstream", "test", "up")
	p2, err := cs.ListPrompts(ctx, nil)
	keep("MCP prompts/list, upstream refusing", p2, err)
	status, err := gw.Upstreams().Status(ctx)
	keep("upstream status", status, err)
	mustCLI("", "upstream", "list", "--json")
	mustCLI("", "upstream", "list")

	// 6. Key rotation under a running server, then a call with the new key.
	mustCLI("", "vault", "rotate")
	if res := call(cs, "web.call", map[string]any{"path": "/echo"}); res.IsError {
		t.Errorf("after rotation: %s", upstreamtest.Text(res))
	}

	// 7. The observability endpoints.
	for _, p := range []string{"/metrics", "/healthz", "/readyz", "/.well-known/oauth-protected-resource"} {
		admin("GET", p, "", "")
	}
	mustCLI("", "audit", "query", "--json")
	ev.addDir(t, state, "while serving")

	cs.Close()
	stateless.Close()
	srv.Close()
	stopSrv()
	gw.Close()
	st.Close()

	// 8. `legate serve` itself, briefly, on the same state.
	serveLogFrom := fileSize(t, stderr)
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs([]string{"serve", "--listen", "127.0.0.1:0", "--config", cfgPath, "--state-dir", state, "--log-level", "debug"})
		err := root.ExecuteContext(serveCtx)
		ev.addJSON("output of `legate serve`", out.String(), err)
		served <- err
	}()
	var serveURL string
	waitUntil(t, "`legate serve` to listen", func() bool {
		b, _ := os.ReadFile(stderr)
		m := regexp.MustCompile(`mcp=(http://127\.0\.0\.1:\d+/mcp)`).FindSubmatch(b[min(serveLogFrom, int64(len(b))):])
		if m != nil {
			serveURL = string(m[1])
		}
		return m != nil
	})
	hc := &http.Client{Transport: recordingTransport{ev, http.DefaultTransport}}
	scs, err := mcp.NewClient(&mcp.Implementation{Name: "canary", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: serveURL, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	sl, err := scs.ListTools(ctx, nil)
	keep("`legate serve` tools/list", sl, err)
	if res := call(scs, "web.call", map[string]any{"path": "/echo"}); res.IsError {
		t.Errorf("through `legate serve`: %s", upstreamtest.Text(res))
	}
	call(scs, "web.call", map[string]any{"path": "/e401"})
	call(scs, "mcp.up.echo", map[string]any{"text": "x"})
	for _, p := range []string{"/readyz", "/metrics"} {
		if resp, err := hc.Get(strings.TrimSuffix(serveURL, "/mcp") + p); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	scs.Close()
	stopServe()
	if err := <-served; err != nil {
		t.Errorf("legate serve: %v", err)
	}

	// 9. What the CLI shows afterwards.
	mustCLI("", "approvals", "list", "--all", "--json")
	mustCLI("", "approvals", "show", idPost)
	mustCLI("", "audit", "query", "--json")
	mustCLI("", "audit", "tail", "-n", "500", "--json")
	mustCLI("", "upstream", "list", "--json")
	mustCLI("", "vault", "list", "--json")
	mustCLI("", "vault", "list", "--all", "--json")
	mustCLI("", "connector", "list")
	mustCLI("", "tools", "list", "--json")
	mustCLI("", "config", "validate")
	ev.addDir(t, state, "at the end")
	stderrBytes, err := os.ReadFile(stderr)
	if err != nil {
		t.Fatal(err)
	}
	ev.add("the CLI's and `legate serve`'s logs (stderr, debug)", stderrBytes)

	// The canaries were really used: otherwise finding none proves nothing.
	if apiOK.Load() < 10 {
		t.Errorf("the API saw the vault token %d times", apiOK.Load())
	}
	if hookOK.Load() < 2 || hookRejected.Load() < 2 {
		t.Errorf("webhook deliveries verified with the signing secret: %d, rejected: %d", hookOK.Load(), hookRejected.Load())
	}
	if upGate.granted.Load() < 3 || goneGate.granted.Load() < 1 {
		t.Errorf("the upstreams saw the header %d and %d times", upGate.granted.Load(), goneGate.granted.Load())
	}
	if n := other.Load(); n > 0 {
		t.Errorf("the token followed a redirect to another origin %d times", n)
	}
	if !bytes.Contains(logs.Bytes(), []byte("approval")) || !strings.Contains(string(stderrBytes), "legate serving") {
		t.Error("the logs are not being captured")
	}

	hits, pieces, n := ev.scan(canaries...)
	ev.dump(t, os.Getenv("LEGATE_CANARY_DUMP"))
	for _, h := range hits {
		t.Errorf("LEAK: %s", h)
	}

	// The scan would have caught a leak: the same evidence with a canary
	// planted in the middle of the server's logs, or of the database.
	for _, c := range canaries {
		logged := logs.Bytes()
		planted := slices.Concat(logged[:len(logged)/2], []byte(`"error":"token `+c.value[:len(c.value)-5]), logged[len(logged)/2:])
		if _, ok := c.find("planted", planted); !ok {
			t.Errorf("the scan misses canary %s cut short in the logs", c.label)
		}
		db := []byte(base64.StdEncoding.EncodeToString([]byte("x" + c.value + "y")))
		if _, ok := c.find("planted", db); !ok {
			t.Errorf("the scan misses canary %s base64-encoded", c.label)
		}
	}
	t.Logf("scanned %d pieces, %d bytes, for %d canaries in %d forms each: %d leaks; %s",
		pieces, n, len(canaries), len(tok.needles), len(hits), time.Since(start).Round(time.Millisecond))
}

// waitUntil polls cond every 20ms for up to 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	upstreamtest.Eventually(t, 10*time.Second, cond, "waiting for %s", what)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// The scan finds a canary in every form it claims to, and nothing in text
// that only looks like one.
func TestCanaryScanFindsPlantedLeaks(t *testing.T) {
	c := newCanary(t, "SELF")
	random := c.value[len("CANARY-SELF-"):]
	planted := map[string]string{
		"plain":            "Authorization: Bearer " + c.value,
		"json":             `{"headers":{"Authorization":["Bearer ` + c.value + `"]}}`,
		"cut at a limit":   "… token " + c.value[:len("CANARY-SELF-")+5],
		"tail only":        "…" + random[len(random)-pieceLen:],
		"middle piece":     "x" + random[7:7+pieceLen] + "y",
		"hex":              hex.EncodeToString([]byte("Bearer " + c.value)),
		"base64 offset 0":  base64.StdEncoding.EncodeToString([]byte(c.value + "tail")),
		"base64 offset 1":  base64.StdEncoding.EncodeToString([]byte("B" + c.value)),
		"base64 offset 2":  base64.RawStdEncoding.EncodeToString([]byte("Be" + c.value + "!")),
		"base64url in url": "?t=" + base64.URLEncoding.EncodeToString([]byte("Bearer "+c.value+"??>>")),
	}
	for name, s := range planted {
		if _, ok := c.find(name, []byte(s)); !ok {
			t.Errorf("%s: not found in %q", name, s)
		}
	}
	ev := &evidence{}
	ev.add("clean", []byte(`{"body":"Authorization: Bearer [redacted]","note":"CANARY-SELF-","x":"`+random[:pieceLen-1]+`"}`))
	ev.add("dirty", []byte("zzz"+c.value+"zzz"))
	hits, pieces, _ := ev.scan(c)
	if pieces != 2 || len(hits) != 1 || hits[0].where != "dirty" {
		t.Fatalf("hits %v", hits)
	}
}
