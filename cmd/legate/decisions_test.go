package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// The same decision, made through each way there is to make one — the
// admin API, the panel, the CLI through the running server, the user
// answering in the client, and the CLI on the store when no server runs —
// is one audit row and, where a server measures it, one observation of the
// decision latency.
func TestEveryWayToDecideIsAuditedAndMeasuredOnce(t *testing.T) {
	ctx := context.Background()
	var delivered atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { delivered.Add(1) }))
	defer recv.Close()
	addr, panelAddr := freeAddr(t), freeAddr(t)
	t.Setenv("LEGATE_ADMIN_TOKEN", "admin-token")
	state := t.TempDir()
	cfg := writeConfig(t, `
approvals: {wait: 300ms}
panel: {listen: "`+panelAddr+`"}
policy:
  rules:
    - {tool: hooks.send, action: approve, confirm: client}
connectors:
  - id: hooks
    type: webhook
    config: {url: "`+recv.URL+`", allow_private_networks: true}
`)
	base, stop := serveOn(t, addr, cfg, state)
	defer stop()
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// pending has a client without elicitation call a write the policy
	// holds: the request waits in the inbox.
	plain, err := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	n := 0
	pending := func() string {
		t.Helper()
		n++
		res, err := plain.CallTool(ctx, &mcp.CallToolParams{Name: "hooks__send", Arguments: map[string]any{"payload": n}})
		if err != nil || errCode(res) != "APPROVAL_PENDING" {
			t.Fatalf("a held call: %v %v", upstreamtest.Text(res), err)
		}
		return regexp.MustCompile(`ap_[A-Za-z0-9_-]+`).FindString(upstreamtest.Text(res))
	}
	measured := 0
	check := func(how, id string, metrics bool) {
		t.Helper()
		a, err := st.Approvals().Get(ctx, id)
		if err != nil || a.DecidedAt.IsZero() {
			t.Fatalf("%s: request %s not decided: %+v %v", how, id, a, err)
		}
		rows := func() []store.AuditRow {
			var out []store.AuditRow
			for _, tool := range []string{"admin.approvals.approve", "admin.approvals.deny"} {
				got, err := st.Audit().Query(ctx, store.AuditQuery{Tool: tool, Limit: 1000})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range got {
					if r.ApprovalID == id {
						out = append(out, r)
					}
				}
			}
			return out
		}
		waitUntil(t, how+": the decision's audit row", func() bool { return len(rows()) > 0 })
		time.Sleep(500 * time.Millisecond) // the writer flushes every 200ms: a second row would be there
		if got := rows(); len(got) != 1 || got[0].Principal != a.Decider {
			t.Errorf("%s: audit rows of the decision %+v, want one by %q", how, got, a.Decider)
		}
		if !metrics {
			return
		}
		measured++
		if got := decisionsMeasured(t, base); got != measured {
			t.Errorf("%s: %d decisions measured, want %d", how, got, measured)
		}
	}

	// The admin API.
	id := pending()
	req, _ := http.NewRequest("POST", base+"/admin/v1/approvals/"+id+"/approve", strings.NewReader(`{"decider": "ops"}`))
	req.Header.Set("Authorization", "Bearer admin-token")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("admin API: %v %v", resp, err)
	}
	check("the admin API", id, true)

	// The panel.
	id = pending()
	panel := panelLogin(t, "http://"+panelAddr, "admin-token")
	panel.post("/approvals/"+id+"/deny", url.Values{"reason": {"not now"}})
	check("the panel", id, true)

	// The CLI, through the running server.
	id = pending()
	if out, err := runCLI(t, "approvals", "approve", id, "--state-dir", state, "--config", cfg); err != nil {
		t.Fatalf("legate approvals approve: %v\n%s", err, out)
	}
	check("the CLI through the server", id, true)

	// The user, answering in the client.
	eliciting, err := mcp.NewClient(&mcp.Implementation{Name: "eliciting", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{policy.ConfirmField: true}}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer eliciting.Close()
	if res, err := eliciting.CallTool(ctx, &mcp.CallToolParams{Name: "hooks__send", Arguments: map[string]any{"payload": "asked"}}); err != nil || res.IsError {
		t.Fatalf("confirmed in the client: %v %v", upstreamtest.Text(res), err)
	}
	inClient, err := st.Approvals().List(ctx, store.ApprovalFilter{AllTenants: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	id = ""
	for _, a := range inClient {
		if strings.HasSuffix(a.Decider, "(in the client)") {
			id = a.ID
		}
	}
	check("in the client", id, true)

	// The CLI on the store, no server running.
	stop()
	now := time.Now()
	if err := st.Approvals().Create(ctx, &store.Approval{ID: "ap_offline", Principal: "local", Tool: "hooks.send", Class: "write",
		Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "approvals", "deny", "ap_offline", "--as", "bob", "--state-dir", state, "--config", cfg); err != nil {
		t.Fatalf("legate approvals deny without a server: %v\n%s", err, out)
	}
	check("the CLI without a server", "ap_offline", false)
}

// serveOn runs `legate serve` on addr with the config file cfg and the
// state directory state until stop, which waits for it to end; base is
// its URL.
func serveOn(t *testing.T, addr, cfg, state string) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"serve", "--listen", addr, "--config", cfg, "--state-dir", state, "--log-level", "error"})
		served <- root.ExecuteContext(ctx)
	}()
	base = "http://" + addr
	waitUntil(t, "the server to listen", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	var once sync.Once
	return base, func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("legate serve: %v", err)
			}
		})
	}
}

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// decisionsMeasured is the count of the decision-latency histogram at
// base's /metrics.
func decisionsMeasured(t *testing.T, base string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer admin-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^legate_approval_decision_seconds_count (\d+)$`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// panelBrowser is a logged-in browser of the panel.
type panelBrowser struct {
	t          *testing.T
	c          *http.Client
	base, csrf string
}

// panelLogin logs in to the panel at base with token.
func panelLogin(t *testing.T, base, token string) *panelBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	p := &panelBrowser{t: t, c: &http.Client{Jar: jar}, base: base}
	p.csrf = p.formToken("/login")
	p.post("/login", url.Values{"token": {token}})
	p.csrf = p.formToken("/inbox")
	return p
}

// formToken is the CSRF token of the form on the page at path.
func (p *panelBrowser) formToken(path string) string {
	p.t.Helper()
	resp, err := p.c.Get(p.base + path)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(b)
	if m == nil {
		p.t.Fatalf("no CSRF token on %s:\n%s", path, b)
	}
	return string(m[1])
}

// post submits a form to path, failing the test on an error page.
func (p *panelBrowser) post(path string, form url.Values) {
	p.t.Helper()
	form.Set("csrf", p.csrf)
	resp, err := p.c.PostForm(p.base+path, form)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`class="error"`)) {
		p.t.Fatalf("panel POST %s: %s\n%s", path, resp.Status, b)
	}
}

// A change made on the store, no server running, is audited as the same
// change through the admin API is: by the operation, once.
func TestChangesWithoutAServerAreAudited(t *testing.T) {
	state := t.TempDir()
	for _, args := range [][]string{
		{"token", "create", "ci-bot"},
		{"connector", "add", "web", "--type", "http", "--set", "base_url=https://api.example.com/"},
		{"connector", "remove", "web"},
		{"token", "revoke", "ci-bot"},
	} {
		if out, err := runCLI(t, append(args, "--state-dir", state)...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	st, err := sqlite.Open(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Audit().Query(context.Background(), store.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		if !strings.HasPrefix(r.Principal, "cli") || r.Outcome != "ok" {
			t.Errorf("row %+v: want one by the CLI's user that worked", r)
		}
		got = append(got, r.Tool)
	}
	if want := "admin.tokens.create admin.connectors.add admin.connectors.remove admin.tokens.revoke"; strings.Join(got, " ") != want {
		t.Fatalf("audited %q, want %q", got, want)
	}
}

// Accepting a quarantined tool without a server is the operation's:
// released, and audited as the CLI's user.
func TestUpstreamAcceptWithoutAServerIsAudited(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	cfg := writeConfig(t, "upstreams:\n  - {id: held, url: \"http://127.0.0.1:1/mcp\", pin: strict}\n")
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tools := []store.CachedTool{{Name: "echo", Definition: []byte(`{"name":"echo","inputSchema":{"type":"object"}}`), Hash: "h1"}}
	if err := st.Upstreams().SaveCache(ctx, "held", tools, nil, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "upstream", "accept", "held", "--config", cfg, "--state-dir", state)
	if err != nil || !strings.Contains(out, "accepted 1 tool definitions of held: echo") {
		t.Fatalf("upstream accept: %v\n%s", err, out)
	}
	rows, err := st.Audit().Query(ctx, store.AuditQuery{Tool: "admin.upstreams.accept", Limit: 10})
	if err != nil || len(rows) != 1 || !strings.HasPrefix(rows[0].Principal, "cli") || rows[0].Detail != "upstream held: echo" {
		t.Fatalf("audit rows %+v (%v), want one by the CLI's user", rows, err)
	}
	if out, err := runCLI(t, "upstream", "list", "-o", "json", "--config", cfg, "--state-dir", state); err != nil || !strings.Contains(out, `"quarantined": 0`) {
		t.Fatalf("still quarantined: %v\n%s", err, out)
	}
}

// Through a running server, `upstream add` is the server's operation: it
// connects and caches the tools, and an upstream it cannot list is removed
// again; both are audited by the server.
func TestUpstreamAddThroughTheServerConnectsOrRollsBack(t *testing.T) {
	ctx := context.Background()
	_, up := upstreamtest.NewRaw(t, `{"name":"w","inputSchema":{"type":"object"}}`)
	state, cfg := t.TempDir(), writeConfig(t, "{}\n")
	_, stop := serveOn(t, freeAddr(t), cfg, state)
	defer stop()
	out, errs, err := runCLISplit(t, "upstream", "add", "ok", "--url", up.URL(), "--state-dir", state, "--config", cfg)
	if err != nil || !strings.Contains(out, `added upstream "ok" (streamable-http): 1 tools`) || !strings.Contains(errs, "through the running server") {
		t.Fatalf("upstream add: %v\n%s\n%s", err, out, errs)
	}
	_, errs, err = runCLISplit(t, "upstream", "add", "down", "--url", "http://127.0.0.1:1/mcp", "--state-dir", state, "--config", cfg)
	if err == nil || !strings.Contains(err.Error(), `upstream "down" not added`) || !strings.Contains(err.Error(), "--no-refresh") {
		t.Fatalf("upstream add of an unreachable upstream: %v\n%s", err, errs)
	}
	stop()
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ups, err := st.Upstreams().List(ctx)
	if err != nil || len(ups) != 1 || ups[0].ID != "ok" {
		t.Fatalf("stored upstreams %+v (%v), want ok alone", ups, err)
	}
	rows, err := st.Audit().Query(ctx, store.AuditQuery{Tool: "admin.upstreams.add", Limit: 10})
	if err != nil || len(rows) != 2 || rows[0].Outcome != "ok" || rows[1].Outcome == "ok" {
		t.Fatalf("audit rows %+v (%v): want the added one ok, the other not", rows, err)
	}
}
