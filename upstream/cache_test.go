package upstream_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

func rawTool(name string) string {
	return `{"name":"` + name + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
}

// After a restart with every upstream down, the cached catalog is there
// before any upstream answers (NewManager does no I/O), stays there after
// the refreshes fail, and calls fail fast with UPSTREAM_UNAVAILABLE.
func TestCachedCatalogSurvivesRestartWithUpstreamsDown(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	raw, httpUp := upstreamtest.NewRaw(t, rawTool("lookup"), rawTool("search"))
	fx := upstreamtest.NewStdio(t)
	cfgs := []upstream.Config{{ID: "remote", URL: httpUp.URL()}, stdioConfig("local", fx)}

	st1 := fileStore(t, dir)
	m1 := newManager(t, st1, upstream.Options{}, cfgs...)
	m1.Start(upstreamtest.Context(t))
	waitTool(t, m1, "remote", "search", 10*time.Second)
	waitTool(t, m1, "local", "echo", 10*time.Second)
	want := strings.Join(names(m1, "remote"), " ") + " | " + strings.Join(names(m1, "local"), " ")
	m1.Close()
	st1.Close()

	// Every upstream stops.
	httpUp.Stop()
	fx.SetMissing(true)
	lists := raw.Lists.Load()

	st2 := fileStore(t, dir)
	m2 := newManager(t, st2, upstream.Options{}, cfgs...)
	if got := strings.Join(names(m2, "remote"), " ") + " | " + strings.Join(names(m2, "local"), " "); got != want {
		t.Fatalf("restarted catalog %q, want %q", got, want)
	}
	m2.Start(upstreamtest.Context(t))
	for _, id := range []string{"remote", "local"} {
		upstreamtest.Eventually(t, 10*time.Second, func() bool { return status(t, m2, id).LastError != "" }, "%s: failed refresh not recorded", id)
	}
	for _, tl := range []*upstream.Tool{tool(m2, "remote", "lookup"), tool(m2, "local", "echo")} {
		start := time.Now()
		_, err := call(m2, tl, "x")
		el := time.Since(start)
		if code := upstreamCode(err); code != legate.CodeUpstreamUnavailable {
			t.Errorf("%s: %v, want UPSTREAM_UNAVAILABLE", tl.Canonical(), err)
		}
		if el >= time.Second {
			t.Errorf("%s: failing took %s, want under 1s", tl.Canonical(), el)
		}
	}
	if got := strings.Join(names(m2, "remote"), " ") + " | " + strings.Join(names(m2, "local"), " "); got != want {
		t.Errorf("after failed refreshes the catalog is %q, want %q", got, want)
	}
	if raw.Lists.Load() != lists {
		t.Error("the stopped upstream was listed")
	}
	if st := status(t, m2, "remote"); st.Tools != 2 || st.RefreshedAt.IsZero() {
		t.Errorf("status %+v", st)
	}
}

// An upstream's notifications/tools/list_changed triggers a refresh (and
// OnToolsChanged).
func TestListChangedFromUpstreamRefreshes(t *testing.T) {
	noLeaks(t)
	srv := upstreamtest.NewEchoServer("notifier")
	var changes atomic.Int64
	m := newManager(t, memStore(t), upstream.Options{OnToolsChanged: func() { changes.Add(1) }},
		upstream.Config{ID: "n", URL: upstreamtest.NewHTTP(t, srv)})
	m.Start(upstreamtest.Context(t))
	waitTool(t, m, "n", "echo", 10*time.Second)
	before := changes.Load()
	upstreamtest.AddEcho(srv, "later")
	tl := waitTool(t, m, "n", "later", 10*time.Second)
	if changes.Load() == before {
		t.Error("OnToolsChanged not called")
	}
	if res, err := call(m, tl, "hi"); err != nil || upstreamtest.Text(res) != "hi" {
		t.Errorf("new tool: %v %v", res, err)
	}
	srv.RemoveTools("echo")
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return tool(m, "n", "echo") == nil }, "removed tool still listed")
}

// refresh_interval refreshes an upstream that never says its tools changed.
func TestRefreshInterval(t *testing.T) {
	noLeaks(t)
	raw, srv := upstreamtest.NewRaw(t, rawTool("a"))
	m := newManager(t, memStore(t), upstream.Options{},
		upstream.Config{ID: "r", URL: srv.URL(), RefreshInterval: dur(100 * time.Millisecond)})
	m.Start(upstreamtest.Context(t))
	waitTool(t, m, "r", "a", 5*time.Second)
	raw.SetTools(rawTool("a"), rawTool("b"))
	waitTool(t, m, "r", "b", 5*time.Second)
}

// Without refresh_interval nothing lists a silent upstream again: its
// cache changes only through a refresh (the check that the next test's
// poll is what picks the change up).
func TestNoRefreshWithoutCause(t *testing.T) {
	noLeaks(t)
	raw, srv := upstreamtest.NewRaw(t, rawTool("a"))
	st := memStore(t)
	polls := &pollCounter{UpstreamStore: st.Upstreams(), polled: make(chan struct{}, 1)}
	m := newManager(t, st, upstream.Options{Store: polls, PollInterval: 20 * time.Millisecond},
		upstream.Config{ID: "r", URL: srv.URL()})
	m.Start(upstreamtest.Context(t))
	waitTool(t, m, "r", "a", 5*time.Second)
	lists := raw.Lists.Load()
	raw.SetTools(rawTool("a"), rawTool("b"))
	polls.wait(t, 5) // five polls after the change: any of them could have listed again
	if tool(m, "r", "b") != nil || raw.Lists.Load() != lists {
		t.Fatalf("upstream listed again without cause (%d lists)", raw.Lists.Load()-lists)
	}
}

// pollCounter is an upstream store that tells of each check of the cache
// version: the Manager's poll, a sync point for tests that wait for polls
// to have happened.
type pollCounter struct {
	store.UpstreamStore
	polled chan struct{}
}

func (p *pollCounter) CacheVersion(ctx context.Context) (int64, error) {
	v, err := p.UpstreamStore.CacheVersion(ctx)
	select {
	case p.polled <- struct{}{}:
	default: // nobody waits: a poll is not worth blocking the Manager
	}
	return v, err
}

// wait returns once n polls have started after the call.
func (p *pollCounter) wait(t *testing.T, n int) {
	t.Helper()
	select { // a poll told of before the call does not count
	case <-p.polled:
	default:
	}
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-p.polled:
		case <-timeout:
			t.Fatalf("fewer than %d polls in 10s", n)
		}
	}
}

// A refresh made by another Manager on the same store file (`legate
// upstream refresh` while a server runs) reaches a running Manager through
// its poll of the cache version.
func TestRefreshElsewhereIsPolled(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	raw, srv := upstreamtest.NewRaw(t, rawTool("a"))
	cfg := upstream.Config{ID: "r", URL: srv.URL()}
	var changes atomic.Int64
	running := newManager(t, fileStore(t, dir), upstream.Options{PollInterval: 50 * time.Millisecond, OnToolsChanged: func() { changes.Add(1) }}, cfg)
	running.Start(upstreamtest.Context(t))
	waitTool(t, running, "r", "a", 5*time.Second)
	before := changes.Load()

	raw.SetTools(rawTool("a"), rawTool("b"))
	cli := newManager(t, fileStore(t, dir), upstream.Options{}, cfg)
	d, err := cli.Refresh(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Added, ",") != "b" {
		t.Fatalf("diff %s", d)
	}
	cli.Close()
	waitTool(t, running, "r", "b", 5*time.Second)
	if changes.Load() == before {
		t.Error("OnToolsChanged not called for the polled change")
	}
}

// A per_client upstream lists on a short session that ends with its
// process; without a client session (the CLI) a call still works.
func TestPerClientWithoutClient(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	cfg := stdioConfig("pc", fx)
	cfg.Session = upstream.SessionPerClient
	m := newManager(t, memStore(t), upstream.Options{}, cfg)
	if _, err := m.Refresh(context.Background(), "pc"); err != nil {
		t.Fatal(err)
	}
	upstreamtest.Eventually(t, 5*time.Second, func() bool { return len(fx.Alive()) == 0 }, "listing left processes %v", fx.Alive())
	if st := status(t, m, "pc"); st.Sessions != 0 {
		t.Errorf("%d sessions after listing", st.Sessions)
	}
	res, err := call(m, tool(m, "pc", "echo"), "cli")
	if err != nil || upstreamtest.Text(res) != "cli" {
		t.Fatalf("call: %v %v", res, err)
	}
	m.Close()
	if alive := fx.Alive(); len(alive) > 0 {
		t.Fatalf("processes %v after Close", alive)
	}
}

// Upstreams refreshed at once each reload the catalog from the store: a
// reload that read the store earlier must never finish last and put an
// older tool set back (tools vanished until the next poll).
func TestConcurrentRefreshesKeepEveryTool(t *testing.T) {
	noLeaks(t)
	_, srv := upstreamtest.NewRaw(t, rawTool("a"), rawTool("b"))
	var cfgs []upstream.Config
	for i := range 12 {
		cfgs = append(cfgs, upstream.Config{ID: fmt.Sprintf("u%d", i), URL: srv.URL()})
	}
	// No polling: only the refreshes' own reloads build the catalog.
	m := newManager(t, fileStore(t, t.TempDir()), upstream.Options{PollInterval: time.Hour}, cfgs...)
	m.Start(upstreamtest.Context(t))
	full := func() bool { return len(m.Tools()) == 2*len(cfgs) }
	upstreamtest.Eventually(t, 10*time.Second, full, "never every tool: %d of %d", len(m.Tools()), 2*len(cfgs))
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if !full() {
			t.Fatalf("tools vanished after every upstream was listed: %d of %d", len(m.Tools()), 2*len(cfgs))
		}
	}
}
