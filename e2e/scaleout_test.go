package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

// composeHAProxy is the HAProxy configuration of deploy/compose.
const composeHAProxy = "../deploy/compose/haproxy.cfg"

// needHAProxy returns Debian's haproxy, or skips t without it (fails it under CI=true, where
// .ci/run installs it).
func needHAProxy(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("e2e: haproxy is not installed (CI=true: .ci/run installs it with apt-get)")
		}
		t.Skip("e2e: haproxy is not installed: apt-get install haproxy")
	}
	return path
}

// The compose deployment's HAProxy configuration is valid.
func TestComposeHAProxyConfig(t *testing.T) {
	bin := needHAProxy(t)
	out, err := exec.Command(bin, "-c", "-f", composeHAProxy).CombinedOutput()
	if err != nil {
		t.Fatalf("haproxy -c -f %s: %v\n%s", composeHAProxy, err, out)
	}
}

// TestScaleOutBehindHAProxy: three "legate serve" replicas on one PostgreSQL database behind
// HAProxy running deploy/compose/haproxy.cfg. Stateless (2026-07-28) clients make 50 webhook
// writes needing approval, spread over the replicas by HAProxy; each is approved or denied
// through the admin API of a replica chosen apart from the one that took the call, some while
// their call waits, some after it returned. One replica is killed with SIGKILL between two
// rounds of calls, with ten requests still undecided; they are decided through the others. Every
// approved write is delivered exactly once (the receiver counts delivery ids, which are the
// approval ids), no denied one ever, no request is lost or left unfinished, and no client sees
// an error. Stateful clients (the TypeScript SDK, 2025-11-25 sessions) work through HAProxy's
// affinity on Mcp-Session-Id.
func TestScaleOutBehindHAProxy(t *testing.T) {
	p := need(t)
	haproxy := needHAProxy(t)
	start := time.Now()
	ctx := context.Background()
	dbURL := pgtest.URL(t)

	secret, admin := "whsec-"+nonce(), "admin-"+nonce()
	rcv := newHookReceiver(t, secret)
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`connectors:
  - id: hooks
    type: webhook
    config: {url: %q, allow_private_networks: true}
    credentials:
      signing_secret: {env: HOOK_SECRET}
approvals:
  wait: 3s
`, rcv.url)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOOK_SECRET=" + secret, "LEGATE_ADMIN_TOKEN=" + admin, "LEGATE_STORE=" + dbURL,
		"LEGATE_MASTER_KEY=k1:" + strings.Repeat("A", 43) + "="}
	var replicas []*killable
	for range 3 {
		replicas = append(replicas, startKillable(t, config, t.TempDir(), env))
	}
	addrOf := func(k *killable) string { return strings.TrimSuffix(strings.TrimPrefix(k.url, "http://"), "/mcp") }
	lb := startHAProxy(t, haproxy, addrOf(replicas[0]), addrOf(replicas[1]), addrOf(replicas[2]))

	st, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// Stateless clients: every request stands alone, HAProxy spreads them.
	var clients []*mcp.ClientSession
	for i := range 3 {
		c := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("scaleout-", i), Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("client %d negotiated %s, want the stateless 2026-07-28", i, v)
		}
		clients = append(clients, cs)
	}

	mark := "mark-" + nonce()
	approve := func(n int) bool { return n%3 != 0 }
	var mu sync.Mutex
	decided := map[string]int{} // approval id -> n
	approvedIDs := map[string]bool{}
	deniedIDs := map[string]bool{}
	kinds := map[string]int{} // what the calls returned
	// decide decides every pending request with n in [lo, hi), through the live replicas in turn.
	decide := func(lo, hi int, live []*killable) int {
		list, err := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, Limit: 1000})
		if err != nil {
			t.Error(err)
			return 0
		}
		done := 0
		for _, a := range list {
			var args struct {
				Payload struct {
					N    int
					Mark string
				}
			}
			if json.Unmarshal(a.Args, &args) != nil || args.Payload.Mark != mark || args.Payload.N < lo || args.Payload.N >= hi {
				continue
			}
			n := args.Payload.N
			verb := "deny"
			if approve(n) {
				verb = "approve"
			}
			adminDecide(t, &server{addr: addrOf(live[n%len(live)])}, admin, a.ID, verb)
			mu.Lock()
			decided[a.ID] = n
			if approve(n) {
				approvedIDs[a.ID] = true
			} else {
				deniedIDs[a.ID] = true
			}
			mu.Unlock()
			done++
		}
		return done
	}
	// round makes calls n in [lo, hi) at once through the clients, deciding those below
	// decideBelow while they wait, and returns when every call returned.
	round := func(lo, hi, decideBelow int, live []*killable) {
		var calls sync.WaitGroup
		for n := lo; n < hi; n++ {
			calls.Go(func() {
				res, err := clients[n%len(clients)].CallTool(ctx, &mcp.CallToolParams{Name: "hooks__send",
					Arguments: map[string]any{"payload": map[string]any{"n": n, "mark": mark}}})
				if err != nil {
					t.Errorf("call n=%d: the client saw an error: %v", n, err)
					return
				}
				kind := checkScaleOutResult(t, n, res, approve(n))
				mu.Lock()
				kinds[kind]++
				mu.Unlock()
			})
		}
		stop := make(chan struct{})
		deciding := make(chan struct{})
		go func() {
			defer close(deciding)
			for {
				decide(lo, min(hi, decideBelow), live)
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		calls.Wait()
		close(stop)
		<-deciding
		decide(lo, min(hi, decideBelow), live) // any created after the last pass
	}

	// Round 1: 30 calls; 20 decided, 10 left undecided.
	round(0, 30, 20, replicas)
	mu.Lock()
	want := len(approvedIDs)
	mu.Unlock()
	rcv.waitTotal(t, want, 30*time.Second)
	// Their outcomes are recorded too: the replica about to be killed runs nothing.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		list, err := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StateExecuted, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d approved requests recorded executed within 30s", len(list), want)
		}
	}

	for i, k := range replicas {
		if !strings.Contains(k.output.String(), "approval requested") {
			t.Errorf("replica %d took none of the 30 calls: HAProxy did not spread them", i+1)
		}
	}

	// kill -9 one replica, with ten requests undecided; decide them through the others.
	replicas[2].kill(t)
	live := replicas[:2]
	if n := decide(20, 30, live); n != 10 {
		t.Fatalf("decided %d of the 10 requests left undecided before the kill, want 10: a request was lost", n)
	}
	// Round 2: 20 more calls at once, through HAProxy, right after the kill.
	round(30, 50, 50, live)

	mu.Lock()
	want = len(approvedIDs)
	if len(decided) != 50 {
		t.Errorf("decided %d requests, want 50", len(decided))
	}
	mu.Unlock()
	rcv.waitTotal(t, want, 60*time.Second)
	time.Sleep(time.Second) // a duplicate would be on its way by now
	counts := rcv.counts()
	for id, c := range counts {
		switch {
		case deniedIDs[id]:
			t.Errorf("denied request %s was delivered %d times", id, c)
		case !approvedIDs[id]:
			t.Errorf("delivery %s is no approved request's", id)
		case c != 1:
			t.Errorf("approved request %s (n=%d) delivered %d times, want exactly once", id, decided[id], c)
		}
	}
	if !maps.Equal(setOf(slices.Collect(maps.Keys(counts))), approvedIDs) {
		t.Errorf("%d approved requests delivered, want all %d", len(counts), len(approvedIDs))
	}
	for _, state := range []string{store.StatePending, store.StateApproved, store.StateExecuting, store.StateFailed, store.StateExpired} {
		if list, err := st.Approvals().List(ctx, store.ApprovalFilter{State: state}); err != nil || len(list) != 0 {
			t.Errorf("%d requests left %s (%v), want none", len(list), state, err)
		}
	}

	// Stateful clients keep their sessions on one replica through HAProxy.
	var reads []batchCall
	for i := range 8 {
		reads = append(reads, batchCall{"legate__approval_status", map[string]any{"approval_id": fmt.Sprint("ap_none_", i)}})
	}
	b, out := runBatch(t, p, lb+"/mcp", reads, "--clients", "4")
	for i, c := range b.Calls {
		for _, a := range c.Attempts {
			if a.Error != nil {
				t.Errorf("stateful call %d through HAProxy: JSON-RPC error %d %s\n%s", i, a.Error.Code, a.Error.Message, out)
			}
		}
	}
	t.Logf("50 writes through 3 replicas (one killed), %d approved and delivered once each, %d denied; the calls returned %v; took %v",
		len(approvedIDs), len(deniedIDs), kinds, time.Since(start).Round(time.Millisecond))
}

// checkScaleOutResult checks one write's result and returns its kind: an approved one returns
// its delivery or, if it was decided after its wait, APPROVAL_PENDING; a denied one
// APPROVAL_DENIED or APPROVAL_PENDING; never anything else.
func checkScaleOutResult(t *testing.T, n int, res *mcp.CallToolResult, approved bool) string {
	sc, _ := res.StructuredContent.(map[string]any)
	if !res.IsError {
		if !approved {
			t.Errorf("call n=%d, denied, returned a delivery: %v", n, sc)
		}
		return "delivered"
	}
	e, _ := sc["error"].(map[string]any)
	if e == nil { // a tool with an output schema has them in _meta
		e, _ = res.Meta["io.legate/error"].(map[string]any)
	}
	code, _ := e["code"].(string)
	switch {
	case code == "APPROVAL_PENDING":
	case code == "APPROVAL_DENIED" && !approved:
	default:
		t.Errorf("call n=%d (approved %v): error result %v", n, approved, sc)
	}
	return code
}

// startHAProxy runs deploy/compose/haproxy.cfg in front of the replicas at addrs, listening on a
// free loopback port, and returns its base URL once it forwards to a replica.
func startHAProxy(t *testing.T, bin string, addrs ...string) string {
	t.Helper()
	cfg, err := os.ReadFile(composeHAProxy)
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(cfg), "bind *:8080", fmt.Sprintf("bind 127.0.0.1:%d", port), 1)
	for i, a := range addrs {
		name := fmt.Sprintf("legate-%d", i+1)
		text = strings.Replace(text, fmt.Sprintf("server %s %s:8080", name, name), fmt.Sprintf("server %s %s", name, a), 1)
	}
	if strings.Contains(text, ":8080") {
		t.Fatalf("%s: an address was not replaced:\n%s", composeHAProxy, text)
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out)
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("haproxy exited: %v\n%s", cmd.ProcessState, out)
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not forward /healthz within 15s\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
