package server_test

// Upstream MCP servers seen through the gateway, black-box: go-sdk clients
// connected over HTTP on 127.0.0.1, upstreams from upstream/upstreamtest.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

func TestMain(m *testing.M) {
	// The stdio upstream fixture is this test binary, re-executed.
	upstreamtest.RunStdioChild()
	// Some tests run replicas on PostgreSQL: its test database is dropped
	// when they end.
	os.Exit(pgtest.Main(m))
}

// allowAll keeps policy out of these tests: every class runs.
const allowAll = `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
`

// upGateway builds and starts a gateway on st from a config document; it
// is closed at cleanup.
func upGateway(t *testing.T, doc string, st store.Store, log *slog.Logger) *server.Gateway {
	t.Helper()
	// A document's own policy section gets allowAll's defaults (a key given
	// twice is an error).
	if i := strings.Index("\n"+doc, "\npolicy:\n"); i >= 0 {
		doc = doc[:i] + strings.TrimPrefix(allowAll, "\n") + doc[i+len("policy:\n"):]
	} else {
		doc = allowAll + doc
	}
	cfg, err := config.Parse([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	return gw
}

func upFileStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// upClient connects a go-sdk client over HTTP with a session; each tools/list_changed it
// receives is sent on the returned channel. It is closed at cleanup.
func upClient(t *testing.T, url string) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 64)
	c := mcp.NewClient(&mcp.Implementation{Name: "upstream-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	// 2025-11-25: a stateful session, which per_client upstream sessions and
	// idle eviction are about.
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changed
}

func wire(canonical string) string { return catalog.WireName(canonical, catalog.Safe) }

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func callText(t *testing.T, cs *mcp.ClientSession, name, text string) (*mcp.CallToolResult, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatalf("%s: JSON-RPC error %v (a failed call must be an isError result)", name, err)
	}
	return res, time.Since(start)
}

// resultCode is the canonical code of an isError result, "" for a success.
func resultCode(res *mcp.CallToolResult) string {
	if !res.IsError {
		return ""
	}
	code, _, _ := strings.Cut(upstreamtest.Text(res), ":")
	return code
}

func waitCatalog(t *testing.T, gw *server.Gateway, canonical ...string) {
	t.Helper()
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		for _, c := range canonical {
			if _, ok := gw.Catalog().Lookup(c); !ok {
				return false
			}
		}
		return true
	}, "catalog never held %v", canonical)
}

func upStatus(t *testing.T, gw *server.Gateway, id string) upstream.Status {
	t.Helper()
	all, err := gw.Upstreams().Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no upstream %s", id)
	return upstream.Status{}
}

// waitNotified waits for a tools/list_changed.
func waitNotified(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("no notifications/tools/list_changed within %s after %s", within, what)
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func roTool(name string) string {
	return `{"name":"` + name + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
}

// Done-when 3: a restarted Legate, every upstream stopped, lists the cached
// tools before any upstream answers, and a call fails with
// UPSTREAM_UNAVAILABLE in under a second.
func TestRestartServesCachedCatalogWithUpstreamsDown(t *testing.T) {
	dir := t.TempDir()
	raw, remote := upstreamtest.NewRaw(t, roTool("lookup"), roTool("search"))
	fx := upstreamtest.NewStdio(t)
	doc := fmt.Sprintf(`
upstreams:
  - id: remote
    url: %q
  - id: local
    %s
`, remote.URL(), fx.YAML())

	st1 := upFileStore(t, dir)
	gw1 := upGateway(t, doc, st1, nil)
	waitCatalog(t, gw1, "mcp.remote.lookup", "mcp.remote.search", "mcp.local.echo", "mcp.local.pid")
	gw1.Close()
	st1.Close()

	remote.Stop()
	fx.SetMissing(true)
	lists := raw.Lists.Load()

	st2 := upFileStore(t, dir)
	cfg, err := config.Parse([]byte(allowAll+doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw2, err := server.New(context.Background(), server.Options{Config: cfg, Store: st2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw2.Close() })
	// Before Start, so before any upstream could answer.
	for _, c := range []string{"mcp.remote.lookup", "mcp.remote.search", "mcp.local.echo", "mcp.local.pid"} {
		if _, ok := gw2.Catalog().Lookup(c); !ok {
			t.Fatalf("restarted catalog lacks %s", c)
		}
	}
	gw2.Start(context.Background())
	cs, _ := upClient(t, serve(t, gw2))
	names := toolNames(t, cs)
	for _, c := range []string{"mcp.remote.lookup", "mcp.local.echo"} {
		if !slices.Contains(names, wire(c)) {
			t.Fatalf("tools/list %v lacks %s", names, wire(c))
		}
		for i := range 3 {
			res, el := callText(t, cs, wire(c), "x")
			if code := resultCode(res); code != string(legate.CodeUpstreamUnavailable) {
				t.Errorf("%s call %d: %q, want UPSTREAM_UNAVAILABLE", c, i, upstreamtest.Text(res))
			}
			if el >= time.Second {
				t.Errorf("%s call %d took %s, want under 1s", c, i, el)
			}
		}
	}
	// The failed refreshes keep the cache.
	for _, id := range []string{"remote", "local"} {
		upstreamtest.Eventually(t, 10*time.Second, func() bool { return upStatus(t, gw2, id).LastError != "" }, "%s: failure not recorded", id)
	}
	if got := toolNames(t, cs); !slices.Equal(got, names) {
		t.Errorf("tools after failed refreshes %v, want %v", got, names)
	}
	if raw.Lists.Load() != lists {
		t.Error("a stopped upstream was listed")
	}
}

// Done-when 3: refreshes reach connected clients as
// notifications/tools/list_changed, whether from Manager.Refresh, from the
// upstream's own list_changed, or from another process's refresh of the
// same store (picked up by polling).
func TestToolChangesReachClients(t *testing.T) {
	dir := t.TempDir()
	raw, rawSrv := upstreamtest.NewRaw(t, roTool("a"))
	sdk := upstreamtest.NewEchoServer("sdk")
	doc := fmt.Sprintf(`
upstreams:
  - {id: raw, url: %q}
  - {id: sdk, url: %q}
`, rawSrv.URL(), upstreamtest.NewHTTP(t, sdk))
	gw := upGateway(t, doc, upFileStore(t, dir), nil)
	waitCatalog(t, gw, "mcp.raw.a", "mcp.sdk.echo")
	cs, changed := upClient(t, serve(t, gw))
	ctx := context.Background()

	expectTool := func(canonical, what string) {
		t.Helper()
		waitNotified(t, changed, 10*time.Second, what)
		upstreamtest.Eventually(t, 5*time.Second, func() bool { return slices.Contains(toolNames(t, cs), wire(canonical)) },
			"%s not listed after %s", canonical, what)
		if res, _ := callText(t, cs, wire(canonical), "hi"); res.IsError {
			t.Errorf("%s: %s", canonical, upstreamtest.Text(res))
		}
	}

	t.Run("refresh", func(t *testing.T) {
		drain(changed)
		raw.SetTools(roTool("a"), roTool("fresh"))
		d, err := gw.Upstreams().Refresh(ctx, "raw")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.Added, []string{"fresh"}) || len(d.Removed)+len(d.Changed) > 0 {
			t.Fatalf("diff %s, want fresh added", d)
		}
		expectTool("mcp.raw.fresh", "Refresh")
	})

	t.Run("upstream list_changed", func(t *testing.T) {
		drain(changed)
		upstreamtest.AddEcho(sdk, "later")
		expectTool("mcp.sdk.later", "the upstream's list_changed")
	})

	t.Run("refresh by another process", func(t *testing.T) {
		drain(changed)
		raw.SetTools(roTool("a"), roTool("fresh"), roTool("cli"))
		st2, err := sqlite.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st2.Close()
		cfg, err := config.Parse([]byte(allowAll+doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		cli, err := server.New(ctx, server.Options{Config: cfg, Store: st2})
		if err != nil {
			t.Fatal(err)
		}
		d, err := cli.Upstreams().Refresh(ctx, "raw")
		cli.Close()
		if err != nil || !slices.Equal(d.Added, []string{"cli"}) {
			t.Fatalf("CLI refresh: %s %v", d, err)
		}
		if _, ok := gw.Catalog().Lookup("mcp.raw.cli"); ok {
			t.Fatal("the running gateway listed the tool by itself: the test proves nothing")
		}
		// The server polls the store every 500ms.
		expectTool("mcp.raw.cli", "a refresh by another process")
	})
}

// tools/list is answered from the catalog, never by asking upstreams.
func TestToolsListNeverCallsUpstreams(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, roTool("a"))
	gw := upGateway(t, fmt.Sprintf("upstreams:\n  - {id: raw, url: %q}\n", srv.URL()), memStore(t), nil)
	waitCatalog(t, gw, "mcp.raw.a")
	lists := raw.Lists.Load()
	cs, _ := upClient(t, serve(t, gw))
	for range 5 {
		if !slices.Contains(toolNames(t, cs), wire("mcp.raw.a")) {
			t.Fatal("tool not listed")
		}
	}
	if n := raw.Lists.Load() - lists; n != 0 {
		t.Errorf("5 tools/list made %d upstream tools/list", n)
	}
}

// Schemas reach clients unchanged, including ones without "type":"object"
// that the go-sdk refuses to register; classes follow the annotations, and
// trust_annotations: false never gives read.
func TestSchemasAndClassesThroughGateway(t *testing.T) {
	schemas := map[string]string{
		"string-schema": `{"type":"string","minLength":1}`,
		"empty-schema":  `{}`,
		"union-schema":  `{"type":["object","null"],"properties":{"x":{"type":"integer"}}}`,
		"rich-schema":   `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"number","minimum":1.5,"default":10},"e":{"enum":[1,"a",null]}},"required":["n"],"additionalProperties":false,"$defs":{"r":{"type":"string"}}}`,
	}
	var defs []string
	for name, s := range schemas {
		defs = append(defs, `{"name":"`+name+`","inputSchema":`+s+`,"annotations":{"readOnlyHint":true}}`)
	}
	defs = append(defs,
		`{"name":"no-schema","annotations":{"readOnlyHint":true}}`,
		`{"name":"destr","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
		`{"name":"plain","inputSchema":{"type":"object"}}`,
	)
	raw, srv := upstreamtest.NewRaw(t, defs...)
	gw := upGateway(t, fmt.Sprintf(`
upstreams:
  - {id: odd, url: %q}
  - {id: wary, url: %q, trust_annotations: false, tools: {include: ["*-schema", "destr"], exclude: ["empty-*"]}}
`, srv.URL(), srv.URL()), memStore(t), nil)
	waitCatalog(t, gw, "mcp.odd.plain", "mcp.wary.destr")
	cs, _ := upClient(t, serve(t, gw))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		byName[tl.Name] = tl
	}
	for name, s := range schemas {
		tl := byName[wire("mcp.odd."+name)]
		if tl == nil {
			t.Fatalf("%s not listed", name)
		}
		got, _ := json.Marshal(tl.InputSchema)
		if !upstreamtest.SameJSON(got, []byte(s)) {
			t.Errorf("%s: schema %s, want %s", name, got, s)
		}
		if r, _ := callText(t, cs, tl.Name, "x"); r.IsError {
			t.Errorf("%s: call: %s", name, upstreamtest.Text(r))
		}
	}
	if tl := byName[wire("mcp.odd.no-schema")]; tl == nil {
		t.Error("no-schema not listed")
	} else if m, ok := tl.InputSchema.(map[string]any); !ok || m["type"] != "object" {
		t.Errorf("a missing schema is served as %#v, want an object schema", tl.InputSchema)
	}
	// Filter: include *-schema and destr, exclude empty-*.
	var wary []string
	for name := range byName {
		if rest, ok := strings.CutPrefix(name, wire("mcp.wary.")); ok {
			wary = append(wary, rest)
		}
	}
	slices.Sort(wary)
	if got := strings.Join(wary, " "); got != "destr no-schema rich-schema string-schema union-schema" {
		t.Errorf("filtered tools %q", got)
	}
	classes := map[string]legate.Class{
		"mcp.odd.string-schema":  legate.ClassRead,
		"mcp.odd.destr":          legate.ClassDestructive,
		"mcp.odd.plain":          legate.ClassWrite,
		"mcp.wary.string-schema": legate.ClassWrite,
		"mcp.wary.destr":         legate.ClassDestructive,
	}
	for c, want := range classes {
		e, ok := gw.Catalog().Lookup(c)
		if !ok {
			t.Fatalf("%s not in the catalog", c)
		}
		if e.Class != want {
			t.Errorf("%s: class %s, want %s", c, e.Class, want)
		}
	}
	// Legate is still serving.
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if raw.Calls.Load() != int64(len(schemas)) {
		t.Errorf("upstream saw %d calls", raw.Calls.Load())
	}
}

// Done-when 4 end to end: broken upstreams beside a healthy one. Clients
// get isError results (never a JSON-RPC error) coded TIMEOUT or
// UPSTREAM_UNAVAILABLE, the circuit opens and then fails fast, and every
// concurrent call to the healthy upstream succeeds.
func TestBrokenUpstreamsThroughGateway(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
	good := upstreamtest.NewHTTP(t, upstreamtest.NewEchoServer("good"))
	hang, hangSrv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("hang"))
	e500, e500Srv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("e500"))
	crash, crashSrv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("crash"))
	garbage, garbageSrv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("garbage"))
	st := memStore(t)
	gw := upGateway(t, fmt.Sprintf(`
upstreams:
  - {id: good, url: %q}
  - {id: hang, url: %q, timeout: 300ms}
  - {id: e500, url: %q}
  - {id: crash, url: %q}
  - {id: garbage, url: %q}
`, good, hangSrv.URL(), e500Srv.URL(), crashSrv.URL(), garbageSrv.URL()), st, nil)
	waitCatalog(t, gw, "mcp.good.echo", "mcp.hang.echo", "mcp.e500.echo", "mcp.crash.echo", "mcp.garbage.echo")
	url := serve(t, gw)
	cs, _ := upClient(t, url)
	hang.Set(upstreamtest.Hang)
	e500.Set(upstreamtest.Status500)
	crash.Set(upstreamtest.Crash)
	garbage.Set(upstreamtest.Malformed)

	var (
		wg       sync.WaitGroup
		stop     = make(chan struct{})
		okCalls  atomic.Int64
		failures = make(chan string, 1000)
	)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("%d-%d", w, i)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire("mcp.good.echo"), Arguments: map[string]any{"text": text}})
				switch {
				case err != nil:
					failures <- err.Error()
				case res.IsError || upstreamtest.Text(res) != text:
					failures <- upstreamtest.Text(res)
				default:
					okCalls.Add(1)
				}
			}
		})
	}
	for _, id := range []string{"hang", "e500", "crash", "garbage"} {
		t.Run(id, func(t *testing.T) {
			name := wire("mcp." + id + ".echo")
			// Default breaker: opens after 5 consecutive failures.
			for i := 0; upStatus(t, gw, id).Circuit != "open"; i++ {
				if i > 10 {
					t.Fatalf("circuit %s after %d failures", upStatus(t, gw, id).Circuit, i)
				}
				res, el := callText(t, cs, name, "x")
				code := resultCode(res)
				if code != string(legate.CodeUpstreamUnavailable) && code != string(legate.CodeTimeout) {
					t.Fatalf("call %d: %q, want TIMEOUT or UPSTREAM_UNAVAILABLE", i, upstreamtest.Text(res))
				}
				if el > 5*time.Second {
					t.Errorf("call %d took %s", i, el)
				}
			}
			res, el := callText(t, cs, name, "x")
			if resultCode(res) != string(legate.CodeUpstreamUnavailable) || el > 500*time.Millisecond {
				t.Errorf("open circuit: %q after %s", upstreamtest.Text(res), el)
			}
		})
	}
	close(stop)
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("healthy call failed: %s", f)
	}
	if okCalls.Load() < 20 {
		t.Errorf("only %d healthy calls", okCalls.Load())
	}
	for _, f := range []*upstreamtest.Faulty{hang, e500, crash, garbage} {
		f.Set(upstreamtest.Healthy)
	}
	cs.Close()
	gw.Close()
}

// Done-when 5: an unset header_env variable fails that upstream alone,
// named in its status; the other upstream lists and calls; the value of
// the set variable appears in no log line, status or store file.
func TestHeaderEnvThroughGateway(t *testing.T) {
	const secret = "Bearer gw-s3cr3t-9d2e41"
	t.Setenv("LEGATE_UPTEST_TOKEN", secret)
	os.Unsetenv("LEGATE_UPTEST_MISSING")
	raw := &upstreamtest.Raw{}
	raw.SetTools(roTool("ping"))
	good := upstreamtest.NewServer(t, requireAuth(secret, raw))
	down := upstreamtest.NewServer(t, raw)
	down.Stop()

	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	st := upFileStore(t, dir)
	gw := upGateway(t, fmt.Sprintf(`
upstreams:
  - {id: good, url: %q, header_env: {Authorization: LEGATE_UPTEST_TOKEN}}
  - {id: missing, url: %q, header_env: {Authorization: LEGATE_UPTEST_MISSING}}
  - {id: down, url: %q, header_env: {Authorization: LEGATE_UPTEST_TOKEN}}
`, good.URL(), good.URL(), down.URL()), st, log)
	waitCatalog(t, gw, "mcp.good.ping")
	if s := upStatus(t, gw, "missing"); !strings.Contains(s.LastError, "LEGATE_UPTEST_MISSING") {
		t.Errorf("missing: last error %q does not name the variable", s.LastError)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return upStatus(t, gw, "down").LastError != "" }, "down: no error recorded")

	cs, _ := upClient(t, serve(t, gw))
	if names := toolNames(t, cs); !slices.Contains(names, wire("mcp.good.ping")) {
		t.Fatalf("tools %v", names)
	}
	for range 3 {
		if res, _ := callText(t, cs, wire("mcp.good.ping"), "x"); res.IsError {
			t.Fatalf("good: %s", upstreamtest.Text(res))
		}
	}
	all, _ := gw.Upstreams().Status(context.Background())
	statusJSON, _ := json.Marshal(all)
	if strings.Contains(string(statusJSON), "s3cr3t") {
		t.Errorf("the value is in the status: %s", statusJSON)
	}
	cs.Close()
	gw.Close()
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Errorf("the value is in the logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "LEGATE_UPTEST_MISSING") {
		t.Error("the missing variable is not logged")
	}
	st.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("s3cr3t")) {
			t.Errorf("the value is stored in %s", f)
		}
	}
}

// Done-when 6: idle client sessions are evicted after
// session_idle_timeout, closing their per_client upstream sessions and
// ending their stdio processes; an active client keeps its own.
func TestIdleSessionsEvicted(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
	fx := upstreamtest.NewStdio(t)
	gw := upGateway(t, fmt.Sprintf(`
session_idle_timeout: 500ms
upstreams:
  - id: pc
    session: per_client
    %s
`, fx.YAML()), memStore(t), nil)
	waitCatalog(t, gw, "mcp.pc.pid")
	url := serve(t, gw)

	pidOf := func(cs *mcp.ClientSession) int {
		t.Helper()
		res, _ := callText(t, cs, wire("mcp.pc.pid"), "")
		pid, err := strconv.Atoi(upstreamtest.Text(res))
		if err != nil {
			t.Fatalf("pid: %q", upstreamtest.Text(res))
		}
		return pid
	}
	// Every client pings while the others start (starting a process can
	// take longer than the idle timeout under -race).
	var clients []*mcp.ClientSession
	var pings []*pinger
	var pids []int
	for range 4 {
		cs, _ := upClient(t, url) // never closed until cleanup
		p := startPinger(cs)
		t.Cleanup(func() { p.stop() })
		pid := pidOf(cs)
		if pidOf(cs) != pid {
			t.Fatal("one client got two upstream processes")
		}
		clients, pings, pids = append(clients, cs), append(pings, p), append(pids, pid)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(pids)))) != 4 {
		t.Fatalf("clients share processes: %v", pids)
	}
	for _, pid := range pids {
		if !upstreamtest.PIDAlive(pid) {
			t.Fatalf("process %d not running", pid)
		}
	}
	if s := upStatus(t, gw, "pc"); s.Sessions != 4 {
		t.Fatalf("%d upstream sessions for 4 clients", s.Sessions)
	}

	// Three clients fall silent without closing; the last keeps pinging.
	abandoned, activePID := pids[:3], pids[3]
	for _, p := range pings[:3] {
		if err := p.stop(); err != nil {
			t.Fatalf("ping: %v", err)
		}
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		for _, pid := range abandoned {
			if upstreamtest.PIDAlive(pid) {
				return false
			}
		}
		return upStatus(t, gw, "pc").Sessions == 1
	}, "idle sessions not evicted: %v upstream sessions, processes %v of %v alive",
		upstreamtest.Lazy(func() any { return upStatus(t, gw, "pc").Sessions }), upstreamtest.Lazy(func() any { return fx.Alive() }), pids)
	if err := pings[3].stop(); err != nil {
		t.Fatalf("the active client was evicted: %v", err)
	}
	if !upstreamtest.PIDAlive(activePID) || pidOf(clients[3]) != activePID {
		t.Fatal("the active client lost its upstream process")
	}

	// Idle in turn, it goes too.
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		return upStatus(t, gw, "pc").Sessions == 0 && len(fx.Alive()) == 0
	}, "after every client idled: %v sessions, processes %v alive",
		upstreamtest.Lazy(func() any { return upStatus(t, gw, "pc").Sessions }), upstreamtest.Lazy(func() any { return fx.Alive() }))
	gw.Close()
	if alive := fx.Alive(); len(alive) > 0 {
		t.Fatalf("processes %v after Close", alive)
	}
}

// pinger pings a client session every 100ms until stopped.
type pinger struct {
	once sync.Once
	done chan struct{}
	err  chan error
	res  error
}

func startPinger(cs *mcp.ClientSession) *pinger {
	p := &pinger{done: make(chan struct{}), err: make(chan error, 1)}
	go func() {
		for {
			select {
			case <-p.done:
				p.err <- nil
				return
			case <-time.After(100 * time.Millisecond):
			}
			if err := cs.Ping(context.Background(), nil); err != nil {
				p.err <- err
				return
			}
		}
	}()
	return p
}

// stop ends the pings and returns the first failure.
func (p *pinger) stop() error {
	p.once.Do(func() {
		close(p.done)
		p.res = <-p.err
	})
	return p.res
}

// A per_client upstream gives each client its own session, closed (with
// its process) when the client closes its session.
func TestPerClientSessionEndsWithClient(t *testing.T) {
	fx := upstreamtest.NewStdio(t)
	gw := upGateway(t, fmt.Sprintf(`
upstreams:
  - id: pc
    session: per_client
    %s
`, fx.YAML()), memStore(t), nil)
	waitCatalog(t, gw, "mcp.pc.pid")
	url := serve(t, gw)
	a, _ := upClient(t, url)
	b, _ := upClient(t, url)
	pa, _ := callText(t, a, wire("mcp.pc.pid"), "")
	pb, _ := callText(t, b, wire("mcp.pc.pid"), "")
	if upstreamtest.Text(pa) == upstreamtest.Text(pb) {
		t.Fatalf("two clients share process %s", upstreamtest.Text(pa))
	}
	pidA, _ := strconv.Atoi(upstreamtest.Text(pa))
	pidB, _ := strconv.Atoi(upstreamtest.Text(pb))
	a.Close()
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return !upstreamtest.PIDAlive(pidA) }, "process of the closed client still running")
	if !upstreamtest.PIDAlive(pidB) {
		t.Fatal("the other client's process ended")
	}
	if s := upStatus(t, gw, "pc"); s.Sessions != 1 {
		t.Errorf("%d sessions", s.Sessions)
	}
}

// Done-when: a stdio upstream whose process exits is restarted and
// re-listed; clients call it again.
func TestStdioRestartThroughGateway(t *testing.T) {
	fx := upstreamtest.NewStdio(t)
	gw := upGateway(t, fmt.Sprintf("upstreams:\n  - id: local\n    %s\n", fx.YAML()), memStore(t), nil)
	waitCatalog(t, gw, "mcp.local.pid")
	cs, changed := upClient(t, serve(t, gw))
	res, _ := callText(t, cs, wire("mcp.local.pid"), "")
	first, _ := strconv.Atoi(upstreamtest.Text(res))
	fx.SetExtra(true)
	drain(changed)
	if err := killPID(first); err != nil {
		t.Fatal(err)
	}
	waitNotified(t, changed, 10*time.Second, "the restart added a tool")
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return slices.Contains(toolNames(t, cs), wire("mcp.local.extra")) }, "not re-listed")
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		r, _ := callText(t, cs, wire("mcp.local.pid"), "")
		p, err := strconv.Atoi(upstreamtest.Text(r))
		return err == nil && p != first
	}, "no call reached a new process")
	if s := upStatus(t, gw, "local"); s.Sessions != 1 || s.Circuit != "closed" {
		t.Errorf("status %+v", s)
	}
}

// requireAuth serves h only to requests bearing the Authorization value.
func requireAuth(value string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != value {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// An upstream that accepts connections but never answers must not hold up
// what other upstreams serve: prompts/list (which asks every upstream) and
// /metrics (which reads every upstream's status).
func TestUnresponsiveUpstreamDoesNotDelayOthers(t *testing.T) {
	good := upstreamtest.NewEchoServer("good")
	good.AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	f, bh := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("bh"))
	gw := upGateway(t, fmt.Sprintf("upstreams:\n  - {id: good, url: %q}\n  - {id: bh, url: %q}\n", upstreamtest.NewHTTP(t, good), bh.URL()), memStore(t), nil)
	waitCatalog(t, gw, "mcp.good.echo", "mcp.bh.echo")
	// bh stops answering and drops its connections: Legate must reconnect.
	f.Set(upstreamtest.Unresponsive)
	bh.Stop()
	bh.Start(nil)
	url := serve(t, gw)
	cs, _ := upClient(t, url)
	start := time.Now()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(res.Prompts) != 1 {
		t.Fatalf("prompts/list: %v %v", res, err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("prompts/list took %s: the unresponsive upstream held up the healthy one's prompts", el)
	}
	start = time.Now()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("/metrics took %s", el)
	}
}
