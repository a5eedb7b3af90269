package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// hammer calls tl from workers goroutines until stop is called, which
// returns the number of calls, the failures and the slowest call.
func hammer(m *upstream.Manager, tl *upstream.Tool, workers int) (stop func() (int64, []error, time.Duration)) {
	var (
		wg      sync.WaitGroup
		n       atomic.Int64
		mu      sync.Mutex
		errs    []error
		slowest time.Duration
		done    = make(chan struct{})
		once    sync.Once
	)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				text := fmt.Sprintf("w%d-%d", w, i)
				start := time.Now()
				res, err := call(m, tl, text)
				el := time.Since(start)
				n.Add(1)
				mu.Lock()
				slowest = max(slowest, el)
				switch {
				case err != nil:
					errs = append(errs, err)
				case res.IsError || upstreamtest.Text(res) != text:
					errs = append(errs, fmt.Errorf("result %q, want %q", upstreamtest.Text(res), text))
				}
				mu.Unlock()
			}
		})
	}
	return func() (int64, []error, time.Duration) {
		once.Do(func() { close(done) })
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return n.Load(), errs, slowest
	}
}

// TestFaultIsolation puts each kind of broken upstream beside a healthy
// one: while the bad one misbehaves, concurrent calls to the healthy one
// all succeed; the bad one's circuit opens after BreakerFailures
// consecutive failures and then fails fast without reaching it; once it
// is healthy again, a probe after the cooldown closes the circuit.
func TestFaultIsolation(t *testing.T) { bothPaths(t, faultIsolation) }

func faultIsolation(t *testing.T) {
	const (
		failures = 2
		cooldown = 300 * time.Millisecond
		timeout  = 300 * time.Millisecond
	)
	faults := []upstreamtest.Fault{upstreamtest.Hang, upstreamtest.Crash, upstreamtest.Status500, upstreamtest.Malformed, upstreamtest.Slow}
	type tc struct {
		name  string
		fault upstreamtest.Fault // Healthy: the server goes away instead
	}
	var cases []tc
	for _, f := range faults {
		cases = append(cases, tc{f.String(), f})
	}
	cases = append(cases, tc{"gone", upstreamtest.Healthy})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noLeaks(t)
			ctx := upstreamtest.Context(t)
			goodURL := upstreamtest.NewHTTP(t, upstreamtest.NewEchoServer("good"))
			faulty, bad := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("bad"))
			m := newManager(t, memStore(t), upstream.Options{BreakerFailures: failures, BreakerCooldown: cooldown, ConnectTimeout: 2 * time.Second},
				upstream.Config{ID: "good", URL: goodURL},
				upstream.Config{ID: "bad", URL: bad.URL(), Timeout: dur(timeout)},
			)
			m.Start(ctx)
			good := waitTool(t, m, "good", "echo", 5*time.Second)
			badTool := waitTool(t, m, "bad", "echo", 5*time.Second)
			if res, err := call(m, badTool, "ok"); err != nil || upstreamtest.Text(res) != "ok" {
				t.Fatalf("bad upstream before its fault: %v %v", res, err)
			}

			stop := hammer(m, good, 4)
			defer stop()
			if c.fault == upstreamtest.Healthy {
				bad.Stop()
			} else {
				faulty.SetSlowBy(3 * timeout)
				faulty.Set(c.fault)
			}

			// Failures until the circuit opens.
			attempts := 0
			for u, _ := m.Upstream("bad"); u.Circuit() != "open"; attempts++ {
				if attempts > 10*failures {
					t.Fatalf("circuit still %s after %d failed calls", u.Circuit(), attempts)
				}
				start := time.Now()
				res, err := call(m, badTool, "x")
				if err == nil {
					t.Fatalf("call %d to the broken upstream succeeded: %v", attempts, upstreamtest.Text(res))
				}
				code := upstreamCode(err)
				if code != legate.CodeUpstreamUnavailable && code != legate.CodeTimeout {
					t.Fatalf("call %d: code %s (%v), want UPSTREAM_UNAVAILABLE or TIMEOUT", attempts, code, err)
				}
				if el := time.Since(start); el > timeout+3*time.Second {
					t.Fatalf("call %d took %s", attempts, el)
				}
			}
			if attempts < failures {
				t.Fatalf("circuit opened after %d failures, want %d", attempts, failures)
			}

			// Open: fail fast, without reaching the upstream.
			before := faulty.Calls.Load()
			start := time.Now()
			_, err := call(m, badTool, "x")
			if el := time.Since(start); el > 200*time.Millisecond {
				t.Errorf("call on an open circuit took %s", el)
			}
			if code := upstreamCode(err); code != legate.CodeUpstreamUnavailable {
				t.Errorf("open circuit: code %s (%v), want UPSTREAM_UNAVAILABLE", code, err)
			}
			if faulty.Calls.Load() != before {
				t.Errorf("a call on an open circuit reached the upstream")
			}
			if st := status(t, m, "bad"); st.Circuit != "open" {
				t.Errorf("status circuit %q", st.Circuit)
			}

			// Healthy again: a probe after the cooldown closes the circuit.
			if c.fault == upstreamtest.Healthy {
				bad.Start(nil)
			} else {
				faulty.Set(upstreamtest.Healthy)
			}
			upstreamtest.Eventually(t, 10*time.Second, func() bool {
				res, err := call(m, badTool, "back")
				return err == nil && upstreamtest.Text(res) == "back"
			}, "the recovered upstream never answered")
			u, _ := m.Upstream("bad")
			if u.Circuit() != "closed" {
				t.Errorf("circuit %s after a successful call", u.Circuit())
			}

			n, errs, slowest := stop()
			if len(errs) > 0 {
				t.Errorf("%d of %d calls to the healthy upstream failed, first: %v", len(errs), n, errs[0])
			}
			if n < 8 {
				t.Errorf("only %d calls to the healthy upstream", n)
			}
			if slowest > 2*time.Second {
				t.Errorf("slowest healthy call took %s", slowest)
			}
			if st := status(t, m, "good"); st.Circuit != "closed" {
				t.Errorf("healthy upstream's circuit %s", st.Circuit)
			}
		})
	}
}

// In half-open state exactly one probe goes through; other calls fail
// fast until it answers.
func TestHalfOpenLetsOneProbeThrough(t *testing.T) { bothPaths(t, halfOpenLetsOneProbeThrough) }

func halfOpenLetsOneProbeThrough(t *testing.T) {
	noLeaks(t)
	faulty, bad := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("bad"))
	m := newManager(t, memStore(t), upstream.Options{BreakerFailures: 2, BreakerCooldown: 200 * time.Millisecond},
		upstream.Config{ID: "bad", URL: bad.URL(), Timeout: dur(5 * time.Second)})
	if _, err := m.Refresh(context.Background(), "bad"); err != nil {
		t.Fatal(err)
	}
	tl := tool(m, "bad", "echo")
	faulty.Set(upstreamtest.Status500)
	for range 2 {
		if _, err := call(m, tl, "x"); err == nil {
			t.Fatal("a 500 succeeded")
		}
	}
	u, _ := m.Upstream("bad")
	if u.Circuit() != "open" {
		t.Fatalf("circuit %s after 2 failures", u.Circuit())
	}
	upstreamtest.Eventually(t, 3*time.Second, func() bool { return u.Circuit() == "half-open" }, "circuit never half-open")

	faulty.SetSlowBy(500 * time.Millisecond)
	faulty.Set(upstreamtest.Slow)
	before, held := faulty.Calls.Load(), faulty.Held()
	probe := make(chan error, 1)
	go func() {
		res, err := call(m, tl, "probe")
		if err == nil && upstreamtest.Text(res) != "probe" {
			err = fmt.Errorf("probe answered %q", upstreamtest.Text(res))
		}
		probe <- err
	}()
	faulty.WaitHeld(t, held+1) // the probe has reached the upstream
	start := time.Now()
	_, err := call(m, tl, "second")
	if code := upstreamCode(err); code != legate.CodeUpstreamUnavailable {
		t.Errorf("second call during the probe: %v, want UPSTREAM_UNAVAILABLE", err)
	}
	if el := time.Since(start); el > 200*time.Millisecond {
		t.Errorf("second call during the probe took %s", el)
	}
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if faulty.Calls.Load() != before+1 {
		t.Errorf("%d calls reached the upstream during half-open, want 1", faulty.Calls.Load()-before)
	}
	if u.Circuit() != "closed" {
		t.Errorf("circuit %s after the probe succeeded", u.Circuit())
	}
}

// Errors the upstream answers (JSON-RPC errors, isError results) are
// answers, not failures: they never open the circuit.
func TestAnswersDoNotOpenTheCircuit(t *testing.T) { bothPaths(t, answersDoNotOpenTheCircuit) }

func answersDoNotOpenTheCircuit(t *testing.T) {
	noLeaks(t)
	raw, srv := upstreamtest.NewRaw(t, `{"name":"t","inputSchema":{"type":"object"}}`)
	m := newManager(t, memStore(t), upstream.Options{BreakerFailures: 2},
		upstream.Config{ID: "r", URL: srv.URL()})
	if _, err := m.Refresh(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	tl := tool(m, "r", "t")
	n := 0
	raw.HandleCall(func(string, json.RawMessage) (json.RawMessage, error) {
		n++
		if n%2 == 0 {
			return json.RawMessage(`{"content":[{"type":"text","text":"nope"}],"isError":true}`), nil
		}
		return nil, errors.New("no such thing")
	})
	for i := range 6 {
		res, err := call(m, tl, "x")
		if err == nil && !res.IsError {
			t.Fatalf("call %d succeeded", i)
		}
		if code := upstreamCode(err); err != nil && code == legate.CodeUpstreamUnavailable {
			t.Fatalf("call %d: an upstream's answer became %v", i, err)
		}
	}
	if u, _ := m.Upstream("r"); u.Circuit() != "closed" {
		t.Errorf("circuit %s after answered errors", u.Circuit())
	}
}

// max_concurrency bounds the calls in flight to one upstream: a call
// beyond it waits for a slot only as long as its context lets it, and the
// other upstreams are unaffected.
func TestConcurrencyBound(t *testing.T) {
	noLeaks(t)
	goodURL := upstreamtest.NewHTTP(t, upstreamtest.NewEchoServer("good"))
	faulty, bad := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("bad"))
	m := newManager(t, memStore(t), upstream.Options{BreakerFailures: 2},
		upstream.Config{ID: "good", URL: goodURL},
		upstream.Config{ID: "bad", URL: bad.URL(), MaxConcurrency: 2, Timeout: dur(30 * time.Second)})
	ctx := context.Background()
	for _, id := range m.IDs() {
		if _, err := m.Refresh(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	badTool, good := tool(m, "bad", "echo"), tool(m, "good", "echo")
	faulty.Set(upstreamtest.Hang)
	hctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { m.Call(hctx, badTool, json.RawMessage(`{"text":"h"}`), upstream.Client{}) })
	}
	upstreamtest.Eventually(t, 5*time.Second, func() bool { return faulty.Calls.Load() == 2 }, "the hanging calls never arrived")

	wctx, wcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := m.Call(wctx, badTool, json.RawMessage(`{"text":"third"}`), upstream.Client{})
	wcancel()
	if code := upstreamCode(err); code != legate.CodeUpstreamUnavailable {
		t.Errorf("third call: %v, want UPSTREAM_UNAVAILABLE (too many calls in flight)", err)
	}
	if faulty.Calls.Load() != 2 {
		t.Errorf("%d calls reached the upstream, want 2", faulty.Calls.Load())
	}
	for i := range 5 {
		if res, err := call(m, good, "g"); err != nil || upstreamtest.Text(res) != "g" {
			t.Fatalf("healthy call %d: %v %v", i, res, err)
		}
	}
	cancel()
	wg.Wait()
	// The client gave up: that says nothing of the upstream's health.
	if u, _ := m.Upstream("bad"); u.Circuit() != "closed" {
		t.Errorf("circuit %s after cancelled calls", u.Circuit())
	}
	faulty.Set(upstreamtest.Healthy)
	if res, err := call(m, badTool, "free"); err != nil || upstreamtest.Text(res) != "free" {
		t.Errorf("after the hanging calls ended: %v %v", res, err)
	}
}

// The per-call timeout is restarted by each progress notification: a long
// call that reports progress completes, its progress reaching the client;
// a silent one times out. The upstream is asked for progress only when the
// client asks for it: a client that does not gets the plain timeout.
func TestTimeoutExtendedByProgress(t *testing.T) { bothPaths(t, timeoutExtendedByProgress) }

func timeoutExtendedByProgress(t *testing.T) {
	noLeaks(t)
	srv := upstreamtest.NewEchoServer("slow")
	upstreamtest.AddSlow(srv, "chatty", 900*time.Millisecond, 100*time.Millisecond)
	upstreamtest.AddSlow(srv, "silent", 900*time.Millisecond, 0)
	m := newManager(t, memStore(t), upstream.Options{},
		upstream.Config{ID: "s", URL: upstreamtest.NewHTTP(t, srv), Timeout: dur(300 * time.Millisecond)})
	if _, err := m.Refresh(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []float64
	client := upstream.Client{ProgressToken: "client-token", Progress: func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		defer mu.Unlock()
		if p.ProgressToken == "client-token" {
			seen = append(seen, p.Progress)
		}
	}}
	start := time.Now()
	res, err := callAs(m, tool(m, "s", "chatty"), "", client)
	if err != nil || upstreamtest.Text(res) != "done" {
		t.Fatalf("call with progress: %v %v", res, err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Errorf("call with progress took only %s", el)
	}
	mu.Lock()
	if len(seen) < 5 || seen[0] != 1 {
		t.Errorf("progress the client saw: %v", seen)
	}
	mu.Unlock()

	for _, c := range []struct {
		tool   string
		client upstream.Client
	}{{"silent", client}, {"chatty", upstream.Client{}}} {
		start = time.Now()
		_, err = callAs(m, tool(m, "s", c.tool), "", c.client)
		if code := upstreamCode(err); code != legate.CodeTimeout {
			t.Fatalf("%s call (progress token %v): %v, want TIMEOUT", c.tool, c.client.ProgressToken, err)
		}
		if el := time.Since(start); el < 300*time.Millisecond || el > 800*time.Millisecond {
			t.Errorf("%s call ended after %s, want about 300ms", c.tool, el)
		}
	}
}
