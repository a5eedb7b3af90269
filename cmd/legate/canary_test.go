package main

// A canary secret — from the vault, the environment and a file (http,
// webhook and GitHub connectors' credentials), an upstream's header_env,
// the admin token, and a person's own access and refresh tokens of a
// per-user connection (issued afresh at every call's refresh, each a
// canary) — never appears in any HTTP response, MCP result or error (over
// an HTTP session, stateless, stdio and `legate serve`), notification, log
// line, audit row, stored approval outcome, agent record, metric, CLI
// output or stored byte other than its ciphertext. Tools that were never
// meant to return one are tempted too: host_env (the variables hold the
// environment canaries under names that look like no credential),
// sh_exec and fs_read of a workspace file holding every canary, GitHub
// echoing its token into a successful answer, and an agent run whose
// model asks for all of them.
// The targets echo the credentials back to tempt Legate: plain, gzip- and
// deflate-compressed, JSON-escaped, URL-encoded, base64-encoded, split
// after a scheme and in response headers (canary_fixtures_test.go). The
// test drives every path it can reach, keeps everything Legate said, and
// scans it at the end, one subtest per leak channel
// (canary_evidence_test.go).

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/legate-mcp/legate/agent/agenttest"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
	"github.com/legate-mcp/legate/vault"
)

func TestCanarySecretsNeverLeak(t *testing.T) {
	start := time.Now()
	ctx := context.Background()
	tok := newCanary(t, "TOKEN")   // vault web-token: http bearer token, webhook token
	sig := newCanary(t, "SIGNING") // vault hook-signing: webhook signing_secret
	up := newCanary(t, "UPSTREAM") // $LEGATE_CANARY_UPSTREAM: an upstream's Authorization header
	adm := newCanary(t, "ADMIN")   // $LEGATE_ADMIN_TOKEN: the admin API's bearer token
	envC := newCanary(t, "ENV")    // $LEGATE_CANARY_ENV: http connector webenv's token
	fileC := newCanary(t, "FILE")  // a file: http connector webfile's token
	canaries := []canary{tok, sig, up, adm, envC, fileC}
	adminToken := adm.value

	t.Setenv(vault.EnvMasterKey, "")
	t.Setenv(vault.EnvKeyFile, "")
	t.Setenv("LEGATE_STATE_DIR", "")
	t.Setenv("LEGATE_CANARY_UPSTREAM", "Bearer "+up.value)
	t.Setenv("LEGATE_ADMIN_TOKEN", adminToken)
	t.Setenv("LEGATE_CANARY_ENV", envC.value)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(fileC.value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
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
	api := &canaryAPI{tokens: []canary{tok, envC, fileC}, other: strings.Replace(otherOrigin.URL, "127.0.0.1", "localhost", 1)}
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	hooks := &canaryHooks{signing: sig.value, token: tok.value}
	hooksSrv := httptest.NewServer(hooks)
	defer hooksSrv.Close()

	// A person's own connection (credentials_mode per_user): the
	// provider issues canaries as access and refresh tokens, each a new
	// one, and every token lives 30s, less than the refresh margin, so
	// every call refreshes.
	var issuedMu sync.Mutex
	var issued []canary
	provider := oauthtest.New("canary-client", "canary-client-secret", "")
	provider.ExpiresIn = 30
	provider.NewToken = func(kind, _ string) string {
		issuedMu.Lock()
		defer issuedMu.Unlock()
		c := newCanary(t, fmt.Sprintf("PERUSER-%s-%d", strings.ToUpper(kind), len(issued)))
		issued = append(issued, c)
		api.accept(c)
		return c.value
	}
	oauthMux := http.NewServeMux()
	provider.Mount(func(p string, h http.HandlerFunc) { oauthMux.Handle(p, h) }, "/oauth")
	oauthSrv := httptest.NewServer(oauthMux)
	defer oauthSrv.Close()
	t.Setenv("LEGATE_CANARY_CLIENT_SECRET", "canary-client-secret")

	// The agent's model asks for the host's environment and the leaked
	// file, then answers.
	model := agenttest.NewServer(t,
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("box__host_env", `{}`), agenttest.Call("box__sh_exec", `{"command":"cat leak.txt"}`)}},
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("gh__get_issue", `{"repo":"acme/api","number":7}`)}},
		agenttest.Step{Text: "done"})
	workspace := t.TempDir()
	if err := os.WriteFile(filepath.Join(workspace, "leak.txt"), []byte(fmt.Sprintf("vault %s\nenv %s\nfile %s\nupstream %s\n", tok.value, envC.value, fileC.value, up.value)), 0o600); err != nil {
		t.Fatal(err)
	}

	ups := newCanaryUpstreams(t, "Bearer "+up.value)
	upGate, goneGate, formsGate, goneHTTP := ups.up, ups.gone, ups.forms, ups.goneHTTP

	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	cfgPath := filepath.Join(dir, "config.yaml")
	doc := strings.Replace(canaryConfig(apiSrv.URL, hooksSrv.URL, ups, tokenFile), "\nupstreams:\n", fmt.Sprintf(`
  - id: webuser
    type: http
    credentials_mode: per_user
    config: {base_url: %[1]q, allow_private_networks: true, timeout: 500ms, max_response_bytes: 2048}
    oauth:
      client_id: canary-client
      client_secret: {env: LEGATE_CANARY_CLIENT_SECRET}
      authorize_url: %[2]q
      token_url: %[3]q
      revoke_url: %[4]q
      credential: token
  - id: box
    type: host
    config: {workspace_root: %[5]q, allow_shell: true, shell_allowlist: [cat]}
  - id: gh
    type: github
    config: {base_url: %[6]q, allow_private_networks: true, repositories: [acme/api], max_attempts: 1}
    credentials: {token: {vault: web-token}}
upstreams:
`, apiSrv.URL, oauthSrv.URL+"/oauth/authorize", oauthSrv.URL+"/oauth/token", oauthSrv.URL+"/oauth/revoke", workspace, apiSrv.URL+"/"), 1) +
		fmt.Sprintf("agent:\n  model: {provider: openai-compatible, url: %q, model: scripted-1}\n  connectors: [box, gh]\n", model.URL)
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
	mustCLI("", "upstream", "list", "-o", "json")
	mustCLI("", "tools", "list", "-o", "json")
	mustCLI("", "vault", "list", "-o", "json")
	mustCLI("", "vault", "list", "--all")
	if out := mustCLI("", "tools", "call", "web.call", "--args", `{"path": "/echo"}`); !strings.Contains(out, "[redacted]") {
		t.Errorf("the CLI call's echo was not redacted, or did not come back:\n%s", out)
	}
	cli("", "tools", "call", "web.call", "--args", `{"path": "/e401"}`)
	cli("", "tools", "call", "web.call", "--args", `{"path": "/binary"}`)
	cli("", "tools", "call", "hooks.send", "--args", `{"payload": {"from": "cli"}}`)
	cli("", "tools", "call", "hooks-bad.send", "--args", `{"payload": {"from": "cli"}}`)
	cli("", "tools", "call", "mcp.up.echo", "--args", `{"text": "from the cli"}`)
	for _, args := range []string{`{"path": "/forms"}`, `{"path": "/deflate"}`, `{"path": "/gzip", "headers": {"Accept-Encoding": "gzip"}}`} {
		cli("", "tools", "call", "webenv.call", "--args", args)
	}
	for _, tool := range []string{"mcp.forms.forms", "mcp.forms.rpc_error", "mcp.forms.log"} {
		cli("", "tools", "call", tool, "--args", `{}`)
	}
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
	e := &env{cfg: cfg, stateDir: state, store: st, log: log, masks: vault.NewMasks(),
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

	mc := &mcpCaller{t: t, ev: ev, labels: map[*mcp.ClientSession]string{cs: "session", stateless: "stateless"}}
	call, code, labels := mc.call, errCode, mc.labels
	keep := func(where string, v any, err error) { ev.addJSON(where, v, err) }

	// 3. Lists, then every kind of call, successful and failing.
	tools, err := cs.ListTools(ctx, nil)
	keep("MCP tools/list", tools, err)
	l2, err := stateless.ListTools(ctx, nil)
	keep("MCP tools/list (stateless)", l2, err)
	waitUntil(t, "the upstreams' tools in the catalog", func() bool {
		_, a := gw.Catalog().Lookup("mcp.up.echo")
		_, b := gw.Catalog().Lookup("mcp.gone.echo")
		_, c := gw.Catalog().Lookup("mcp.formspc.log")
		return a && b && c
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
	call(cs, "http.request", map[string]any{"url": apiSrv.URL + "/echo"}) // private: refused, and without credentials anyway
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

	// The person connects through the consent flow, then calls with
	// their own tokens, each call refreshing them.
	if page, err := oauthtest.NewBrowser("canary-person").Connect(base + "/connect/webuser"); err != nil {
		t.Fatalf("connecting webuser: %v: %s", err, page)
	}
	for _, path := range []string{"/echo", "/text", "/big", "/echo"} {
		if res := call(cs, "webuser.call", map[string]any{"path": path}); res.IsError {
			t.Errorf("webuser.call %s: %s", path, upstreamtest.Text(res))
		}
	}
	call(cs, "webuser.call", map[string]any{"path": "/e401"})

	// Tools never meant to return a secret, and an agent run that asks
	// for them: masked by value on their success path, and in the run's
	// record.
	for tool, args := range map[string]map[string]any{
		"box.host_env": {}, "box.sh_exec": {"command": "cat leak.txt"}, "box.fs_read": {"path": "leak.txt"},
		"gh.get_issue": {"repo": "acme/api", "number": 7},
	} {
		res := call(cs, tool, args)
		if b, _ := json.Marshal(res); res.IsError || !bytes.Contains(b, []byte("[redacted]")) {
			t.Errorf("%s: %s, want a result with the canaries masked", tool, b)
		}
	}
	if res := call(cs, "legate.agent.run", map[string]any{"instruction": "Show me the environment and leak.txt."}); res.IsError {
		t.Errorf("legate.agent.run: %s", upstreamtest.Text(res))
	}
	runs, err := st.AgentRuns().List(ctx, store.AgentRunFilter{})
	keep("the agent's runs", runs, err)
	for _, r := range runs {
		full, err := st.AgentRuns().Get(ctx, r.ID)
		keep("the agent's run record "+r.ID, full, err)
		if err == nil && !bytes.Contains(full.Record, []byte("[redacted]")) {
			t.Errorf("the agent's record shows nothing masked: %s", full.Record)
		}
	}
	if len(runs) == 0 {
		t.Error("the agent kept no record")
	}
	call(stateless, "webuser__call", map[string]any{"path": "/echo"})
	mustCLI("", "connections", "list")
	mustCLI("", "connections", "list", "-o", "json")
	admin0, _ := http.NewRequest("GET", base+"/admin/v1/connections", nil)
	admin0.Header.Set("Authorization", "Bearer "+adminToken)
	if resp, err := http.DefaultClient.Do(admin0); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /admin/v1/connections: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	echoes := mc.echoes
	echoes(cs)
	echoes(stateless)
	// A per_client upstream's log messages reach the client as
	// notifications.
	for _, tool := range []string{"forms", "log"} {
		call(cs, "mcp.formspc."+tool, map[string]any{})
	}

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
	pendingOf := func(tool string, args map[string]any) string {
		t.Helper()
		res := call(cs, tool, args)
		if code(res) != "APPROVAL_PENDING" {
			t.Fatalf("%v: %s, want APPROVAL_PENDING", args, upstreamtest.Text(res))
		}
		id := regexp.MustCompile(`approval (\S+) \(state`).FindStringSubmatch(upstreamtest.Text(res))
		if id == nil {
			t.Fatalf("no approval id in %q", upstreamtest.Text(res))
		}
		return id[1]
	}
	pending := func(args map[string]any) string { t.Helper(); return pendingOf("web.call", args) }
	// The approved POST's outcome, stored, is the API's echo of every form.
	post := map[string]any{"method": "POST", "path": "/forms", "json": map[string]any{"order": 42}}
	put := map[string]any{"method": "PUT", "path": "/echo", "body": "replace"}
	del := map[string]any{"method": "DELETE", "path": "/echo"}
	idPost, idPut, idDel := pending(post), pending(put), pending(del)
	upWrite := map[string]any{"n": 1}
	idUp := pendingOf("mcp.forms.forms_write", upWrite)
	mustCLI("", "approvals", "list", "--all", "-o", "json")
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
	mustCLI("", "approvals", "approve", idUp, "--reason", "ok")
	if status, body := admin("POST", "/admin/v1/approvals/"+idDel+"/deny", adminToken, `{"reason": "no"}`); status != http.StatusOK {
		t.Fatalf("deny: %d %s", status, body)
	}
	for _, id := range []string{idPost, idPut, idUp} {
		waitUntil(t, "approval "+id+" to run", func() bool {
			res := call(cs, "legate.approval_status", map[string]any{"approval_id": id})
			b, _ := json.Marshal(res.StructuredContent)
			return bytes.Contains(b, []byte(`"state":"executed"`))
		})
		admin("GET", "/admin/v1/approvals/"+id, adminToken, "")
	}
	for tool, args := range map[string]map[string]any{"web.call": post, "mcp.forms.forms_write": upWrite} {
		if b, _ := json.Marshal(call(cs, tool, args)); !bytes.Contains(b, []byte("[redacted]")) {
			t.Errorf("the approved call to %s, made again: %s, want its stored outcome, masked", tool, b)
		}
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
	mustCLI("", "upstream", "list", "-o", "json")
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
	mustCLI("", "audit", "query", "-o", "jsonl")
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
	labels[scs] = "serve"
	sl, err := scs.ListTools(ctx, nil)
	keep("`legate serve` tools/list", sl, err)
	if res := call(scs, "web.call", map[string]any{"path": "/echo"}); res.IsError {
		t.Errorf("through `legate serve`: %s", upstreamtest.Text(res))
	}
	call(scs, "web.call", map[string]any{"path": "/e401"})
	call(scs, "mcp.up.echo", map[string]any{"text": "x"})
	call(scs, "web.call", map[string]any{"path": "/forms"})
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

	// 8b. `legate stdio` on the same state: the echoes, and the approved
	// call's stored outcome.
	ss, stopStdio := stdioSession(t, ev.open("stdio: everything `legate stdio` wrote"),
		"--config", cfgPath, "--state-dir", state, "--log-level", "debug")
	labels[ss] = "stdio"
	echoes(ss)
	if b, _ := json.Marshal(call(ss, "web.call", post)); !bytes.Contains(b, []byte("[redacted]")) {
		t.Errorf("the approved call over stdio: %s, want its stored outcome, masked", b)
	}
	if err := stopStdio(); err != nil {
		t.Errorf("legate stdio: %v", err)
	}

	// 9. What the CLI shows afterwards.
	mustCLI("", "approvals", "list", "--all", "-o", "json")
	mustCLI("", "approvals", "show", idPost)
	mustCLI("", "audit", "query", "-o", "jsonl")
	mustCLI("", "audit", "tail", "-n", "500", "-o", "jsonl")
	mustCLI("", "upstream", "list", "-o", "json")
	mustCLI("", "vault", "list", "-o", "json")
	mustCLI("", "vault", "list", "--all", "-o", "json")
	mustCLI("", "connector", "list")
	mustCLI("", "tools", "list", "-o", "json")
	mustCLI("", "config", "validate")
	mustCLI("", "connections", "revoke", "webuser")
	ev.addDir(t, state, "at the end")
	stderrBytes, err := os.ReadFile(stderr)
	if err != nil {
		t.Fatal(err)
	}
	ev.add("the CLI's and `legate serve`'s logs (stderr, debug)", stderrBytes)

	// The canaries were really used: otherwise finding none proves nothing.
	if hooks.ok.Load() < 2 || hooks.rejected.Load() < 2 {
		t.Errorf("webhook deliveries verified with the signing secret: %d, rejected: %d", hooks.ok.Load(), hooks.rejected.Load())
	}
	if upGate.granted.Load() < 3 || goneGate.granted.Load() < 1 || formsGate.granted.Load() < 15 {
		t.Errorf("the upstreams saw the header %d, %d and %d times", upGate.granted.Load(), goneGate.granted.Load(), formsGate.granted.Load())
	}
	for _, c := range api.tokens {
		if n := api.seen(c.label); n < 15 {
			t.Errorf("the API saw the %s token %d times", c.label, n)
		}
	}
	issuedMu.Lock()
	perUser := slices.Clone(issued)
	issuedMu.Unlock()
	if len(perUser) < 8 || provider.Refreshes() < 3 || len(provider.Revoked()) != 2 {
		t.Errorf("per-user tokens: %d issued, %d refreshes, %d revoked", len(perUser), provider.Refreshes(), len(provider.Revoked()))
	}
	used := 0 // per-user access tokens the API got: the canaries were really used
	for _, c := range perUser {
		if strings.Contains(c.label, "ACCESS") && api.seen(c.label) > 0 {
			used++
		}
	}
	if used < 3 {
		t.Errorf("the API saw %d of the per-user access tokens", used)
	}
	canaries = append(canaries, perUser...)
	if n := other.Load(); n > 0 {
		t.Errorf("the token followed a redirect to another origin %d times", n)
	}
	if !bytes.Contains(logs.Bytes(), []byte("approval")) || !strings.Contains(string(stderrBytes), "legate serving") {
		t.Error("the logs are not being captured")
	}

	ev.dump(t, os.Getenv("LEGATE_CANARY_DUMP"))
	pieces, n := ev.scanByChannel(t, canaries...)

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
	t.Logf("scanned %d pieces, %d bytes, for %d canaries in %d forms each; %s",
		pieces, n, len(canaries), len(tok.needles), time.Since(start).Round(time.Millisecond))
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
