package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

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

// TestScaleOutBehindHAProxy: three "legate serve" replicas on one PostgreSQL database (a fresh
// schema) behind HAProxy running deploy/compose/haproxy.cfg, and 200 concurrent webhook writes
// needing approval, half from stateless (2026-07-28) clients whose requests HAProxy spreads over
// the replicas, half from stateful (2025-11-25) clients whose sessions it keeps on one replica
// each. Every request is approved or denied through the admin API of a replica other than the
// one that took its call, most while their calls wait, some after their calls returned
// APPROVAL_PENDING (the executor runs them; the clients read the outcome with
// legate.approval_status). Midway, with calls waiting for approval on every replica and approved
// calls executing (the receiver holds their deliveries unanswered), one replica is killed with
// SIGKILL. Then:
//   - every approved write is delivered exactly once (the receiver counts the deliveries of each
//     approval id; each replica posts to a path of its own), every denied one never;
//   - no approval is lost: every request is decided once and settled, none left pending,
//     approved or executing;
//   - the writes the killed replica was executing are failed as interrupted and never run again
//     (their deliveries had arrived, once); every other approved write returns its delivery;
//   - stateless clients get no error: a call cut by the kill is made again through HAProxy,
//     which finds the same request (see scaleClient.write for why that is safe) and waits for
//     its decision on another replica or returns its outcome;
//   - stateful clients whose session was on a surviving replica continue without an error;
//     those whose session was on the killed replica get mcp.ErrSessionMissing (HTTP 404 for
//     their Mcp-Session-Id from the replica HAProxy sends them to), open a new session and make
//     the same call again there.
func TestScaleOutBehindHAProxy(t *testing.T) {
	p := need(t)
	haproxy := needHAProxy(t)
	start := time.Now()
	ctx := context.Background()
	dbURL := pgtest.URL(t)

	secret, admin := "whsec-"+nonce(), "admin-"+nonce()
	rcv := newHookReceiver(t, secret)
	config := filepath.Join(t.TempDir(), "config.yaml")
	// One config for every replica; each posts to a path of its own (HOOK_URL), so the receiver
	// knows which replica ran a write. max_attempts 1: one request is one execution.
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`connectors:
  - id: hooks
    type: webhook
    config: {url: "${HOOK_URL}", allow_private_networks: true, max_attempts: 1}
    credentials:
      signing_secret: {env: HOOK_SECRET}
approvals:
  wait: %s
`, scaleWait)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOOK_SECRET=" + secret, "LEGATE_ADMIN_TOKEN=" + admin, "LEGATE_STORE=" + dbURL,
		"LEGATE_MASTER_KEY=k1:" + strings.Repeat("A", 43) + "="}
	var replicas []*killable
	for i := range 3 {
		replicas = append(replicas, startKillable(t, config, t.TempDir(), append(env, fmt.Sprintf("HOOK_URL=%s/r%d", rcv.url, i))))
	}
	replicaOf := func(d delivery) int { // from the path the replica posts to
		var i int
		if _, err := fmt.Sscanf(path.Base(d.path), "r%d", &i); err != nil {
			return -1
		}
		return i
	}
	deliveryOf := func(id string) (delivery, bool) {
		for _, d := range rcv.all() {
			if d.id == id {
				return d, true
			}
		}
		return delivery{}, false
	}
	addrOf := func(k *killable) string { return strings.TrimSuffix(strings.TrimPrefix(k.url, "http://"), "/mcp") }
	lb := startHAProxy(t, haproxy, addrOf(replicas[0]), addrOf(replicas[1]), addrOf(replicas[2])) + "/mcp"
	const victim = 1 // the replica killed

	st, err := postgres.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// Clients: four stateless, and stateful ones until every replica holds sessions.
	var stateless, stateful []*scaleClient
	for i := range 4 {
		c, err := connectScaleClient(ctx, lb, false, fmt.Sprint("stateless-", i))
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		stateless = append(stateless, c)
	}
	sessionReplica := map[*scaleClient]int{}
	for len(stateful) < 6 || !coversAll(sessionReplica, len(replicas)) {
		if len(stateful) == 15 {
			t.Fatalf("15 stateful sessions through HAProxy, on replicas %v: HAProxy does not spread them", sessionReplica)
		}
		c, err := connectScaleClient(ctx, lb, true, fmt.Sprint("stateful-", len(stateful)))
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		stateful = append(stateful, c)
		sessionReplica[c] = -1
		for i, k := range replicas {
			if sessionsOf(t, k, admin)[c.session().ID()] {
				sessionReplica[c] = i
			}
		}
		if sessionReplica[c] < 0 {
			t.Fatalf("session %s is on no replica", c.session().ID())
		}
	}

	run := &scaleRun{t: t, st: st, admin: admin, mark: "mark-" + nonce(), replicas: replicas, dead: map[int]bool{},
		late: map[string]bool{}, decided: map[string]int{}, via: map[string]int{}, origin: map[string]int{},
		approved: map[string]bool{}, denied: map[string]bool{}}
	deciding, stopDeciding := context.WithCancel(ctx)
	decider := make(chan struct{})
	go func() { defer close(decider); run.decideLoop(deciding) }()
	defer func() { stopDeciding(); <-decider }()

	// 200 writes at once; a call of a write left undecided returns APPROVAL_PENDING after
	// approvals.wait, then its outcome comes through legate.approval_status.
	callCtx, cancelCalls := context.WithTimeout(ctx, 80*time.Second)
	defer cancelCalls()
	writes := make([]*scaleWrite, scaleWrites)
	var calls sync.WaitGroup
	for n := range scaleWrites {
		c := stateless[n/2%len(stateless)]
		if n%2 == 1 {
			c = stateful[n/2%len(stateful)]
		}
		calls.Go(func() { writes[n] = c.write(callCtx, n, run.mark, run.returnedPending) })
	}

	// First 80 writes decided while their calls wait, their deliveries answered at once.
	run.decideBelow(80)
	run.waitDecided(80)
	// Then the receiver holds deliveries: those decided next stay executing.
	rcv.hold()
	below := 110
	var executing []*store.Approval
	for {
		run.decideBelow(below)
		run.waitDecided(below)
		run.pause(true)
		executing = run.quiet(rcv)
		if slices.ContainsFunc(executing, func(a *store.Approval) bool { d, _ := deliveryOf(a.ID); return d.held && replicaOf(d) == victim }) || below >= scaleWrites {
			break
		}
		run.pause(false)
		below += 10
	}
	waiting := run.waitingOn(victim)
	if waiting == 0 {
		t.Fatalf("no call waits for approval on replica %d at the kill (%v after the start): the machine is too slow for approvals.wait %v", victim+1, time.Since(start), scaleWait)
	}
	// The runs replica victim had going: those whose delivery the receiver holds are cut by the
	// kill for sure; one answered before the hold may or may not have recorded its outcome.
	var cut, mayCut []string
	for _, a := range executing {
		if d, ok := deliveryOf(a.ID); ok && replicaOf(d) == victim {
			mayCut = append(mayCut, a.ID)
			if d.held {
				cut = append(cut, a.ID)
			}
		}
	}
	run.kill(victim)
	t.Logf("killed replica %d with %d calls waiting for approval on it and %d approved calls executing on it (%d of them with their delivery held; %d executing in all), %v after the start",
		victim+1, waiting, len(mayCut), len(cut), len(executing), time.Since(start).Round(time.Millisecond))
	rcv.release()
	run.decideBelow(scaleWrites)
	run.pause(false)

	calls.Wait()
	stopDeciding()
	<-decider

	// Outcomes, as the clients saw them.
	run.mu.Lock()
	defer run.mu.Unlock()
	origin := originOf(replicas)
	idOf := map[int]string{} // each write's request, as the decider found it
	for id, n := range run.decided {
		if idOf[n] != "" {
			t.Errorf("write n=%d opened two requests, %s and %s", n, idOf[n], id)
		}
		idOf[n] = id
	}
	if len(run.decided) != scaleWrites {
		t.Errorf("decided %d requests, want %d", len(run.decided), scaleWrites)
	}
	kinds := map[string]map[string]int{"stateless": {}, "stateful": {}}
	errorsOf := map[string]int{}
	errorKinds := map[string]int{} // the errors the calls got, by client kind and message
	var slowest time.Duration
	var interrupted []string // the requests of the writes that came to interrupted
	for _, w := range writes {
		kind := map[bool]string{false: "stateless", true: "stateful"}[w.client.stateful]
		kinds[kind][w.kind]++
		if w.kind == "interrupted" {
			interrupted = append(interrupted, idOf[w.n])
		}
		errorsOf[kind] += len(w.errs)
		for _, err := range w.errs {
			errorKinds[kind+": "+hostPort.ReplaceAllString(err.Error(), "HOST")]++
		}
		slowest = max(slowest, w.took)
		id := idOf[w.n]
		switch {
		case w.problem != "":
			t.Errorf("write n=%d (%s): %s", w.n, w.client.name, w.problem)
		case id == "":
			t.Errorf("write n=%d (%s): its request was never decided", w.n, w.client.name)
		case w.approvalID != "" && w.approvalID != id:
			t.Errorf("write n=%d (%s): its calls name request %s, want %s", w.n, w.client.name, w.approvalID, id)
		case approve(w.n) && w.kind == "denied", !approve(w.n) && w.kind != "denied":
			t.Errorf("write n=%d (%s): approved %v, came to %q", w.n, w.client.name, approve(w.n), w.kind)
		case w.kind == "interrupted" && !slices.Contains(mayCut, id):
			t.Errorf("write n=%d (%s): interrupted, but replica %d was not executing it when it was killed", w.n, w.client.name, victim+1)
		case w.kind != "interrupted" && slices.Contains(cut, id):
			t.Errorf("write n=%d (%s): replica %d was executing it when it was killed, yet it came to %q", w.n, w.client.name, victim+1, w.kind)
		}
		if len(w.errs) > 0 && origin[id] != victim {
			t.Errorf("write n=%d (%s) got errors though its call was on replica %d, which lived: %v", w.n, w.client.name, origin[id]+1, w.errs)
		}
	}
	for id, via := range run.via {
		if via == run.origin[id] {
			t.Errorf("approval %s was decided through replica %d, the one that took its call", id, via+1)
		}
	}
	for i := range replicas {
		if !slices.Contains(slices.Collect(maps.Values(origin)), i) {
			t.Errorf("replica %d took none of the calls: HAProxy did not spread them", i+1)
		}
	}

	// Deliveries, as the receiver counted them.
	counts := rcv.counts()
	duplicates := 0
	for id, c := range counts {
		switch {
		case run.denied[id]:
			t.Errorf("denied request %s was delivered %d times", id, c)
		case !run.approved[id]:
			t.Errorf("delivery %s is no approved request's", id)
		case c != 1:
			duplicates += c - 1
			t.Errorf("approved request %s (n=%d) delivered %d times, want exactly once", id, run.decided[id], c)
		}
	}
	for id := range run.approved {
		if counts[id] == 0 {
			t.Errorf("approved request %s (n=%d) was never delivered", id, run.decided[id])
		}
	}

	// The store: every request settled; the failed ones are those cut by the kill.
	for _, state := range []string{store.StatePending, store.StateApproved, store.StateExecuting, store.StateExpired} {
		if list, err := st.Approvals().List(ctx, store.ApprovalFilter{State: state}); err != nil || len(list) != 0 {
			t.Errorf("%d requests left %s (%v), want none", len(list), state, err)
		}
	}
	failed, err := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StateFailed, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for _, a := range failed {
			if !yield(a.ID) {
				return
			}
		}
	}); !slices.Equal(got, slices.Sorted(slices.Values(interrupted))) {
		t.Errorf("failed requests %v, want the writes that came to interrupted: %v", got, interrupted)
	}

	// Stateful clients: on a surviving replica, no error; on the killed one, session expired.
	expiredSessions := 0
	for _, c := range stateful {
		var errs []error
		expired := false
		for _, w := range writes {
			if w.client == c {
				errs = append(errs, w.errs...)
				expired = expired || w.sessionExpired
			}
		}
		switch {
		case sessionReplica[c] != victim && (len(errs) > 0 || c.renewed > 0):
			t.Errorf("%s: its session on replica %d, which lived, got errors: %v", c.name, sessionReplica[c]+1, errs)
		case sessionReplica[c] == victim && !expired:
			t.Errorf("%s: its session was on the killed replica, yet no call got mcp.ErrSessionMissing: %v", c.name, errs)
		case sessionReplica[c] == victim:
			expiredSessions++
		}
	}
	// The TypeScript SDK's sessions (2025-11-25) work through HAProxy's affinity on the
	// surviving replicas too.
	var reads []batchCall
	for i := range 8 {
		reads = append(reads, batchCall{"legate__approval_status", map[string]any{"approval_id": fmt.Sprint("ap_none_", i)}})
	}
	b, out := runBatch(t, p, lb, reads, "--clients", "4")
	for i, c := range b.Calls {
		for _, a := range c.Attempts {
			if a.Error != nil {
				t.Errorf("TypeScript SDK session, call %d through HAProxy: JSON-RPC error %d %s\n%s", i, a.Error.Code, a.Error.Message, out)
			}
		}
	}

	delivered := 0
	for _, c := range counts {
		delivered += c
	}
	t.Logf("%d writes through %d replicas (replica %d killed): %d approved, %d denied; %d deliveries, %d duplicates, %d denied delivered; "+
		"outcomes: stateless %v, stateful %v; %d writes finished through legate.approval_status; "+
		"call errors (each followed by the same call again): stateless %d, stateful %d; %d stateful sessions expired (of %d on the killed replica) and reopened; "+
		"slowest write %v; took %v",
		scaleWrites, len(replicas), victim+1, len(run.approved), len(run.denied), delivered, duplicates, countIn(counts, run.denied),
		kinds["stateless"], kinds["stateful"], countFunc(writes, func(w *scaleWrite) bool { return w.pendingReturned }),
		errorsOf["stateless"], errorsOf["stateful"], expiredSessions, countFunc(stateful, func(c *scaleClient) bool { return sessionReplica[c] == victim }),
		slowest.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	for _, k := range slices.Sorted(maps.Keys(errorKinds)) {
		t.Logf("%4d× %s", errorKinds[k], k)
	}
}

// hostPort matches the loopback addresses in errors, which differ from run to run.
var hostPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// scaleWrites is the number of writes of TestScaleOutBehindHAProxy, and scaleWait its approvals.wait:
// long enough for the kill to find calls still waiting.
const (
	scaleWrites = 200
	scaleWait   = 20 * time.Second
)

// Writes with an even n come from stateless clients, odd ones from stateful clients (n/2 picks
// which); late and approve do not follow that choice, so that every client has writes of each
// sort, whichever replica its session is on.

// late reports whether write n is decided only once its call returned APPROVAL_PENDING.
func late(n int) bool { return n%7 == 6 }

// approve reports whether write n is approved (else denied).
func approve(n int) bool { return n%5 != 4 }

func coversAll(at map[*scaleClient]int, replicas int) bool {
	seen := map[int]bool{}
	for _, i := range at {
		seen[i] = true
	}
	return len(seen) == replicas
}

func countIn(counts map[string]int, set map[string]bool) int {
	n := 0
	for id := range set {
		n += counts[id]
	}
	return n
}

func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// scaleRun decides the requests of TestScaleOutBehindHAProxy's writes.
type scaleRun struct {
	t        *testing.T
	st       *postgres.Store
	admin    string
	mark     string
	replicas []*killable

	step     sync.Mutex // held through each decision
	mu       sync.Mutex
	dead     map[int]bool
	below    int             // writes n < below that are not late are decided
	paused   bool            // nothing is decided
	late     map[string]bool // requests whose call returned APPROVAL_PENDING
	decided  map[string]int  // approval id -> n
	via      map[string]int  // approval id -> the replica it was decided through
	origin   map[string]int  // approval id -> the replica that took its call
	approved map[string]bool
	denied   map[string]bool
}

func (r *scaleRun) returnedPending(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.late[id] = true
}

func (r *scaleRun) decideBelow(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.below = n
}

// pause stops (or resumes) deciding; once it returns, no decision is under way.
func (r *scaleRun) pause(p bool) {
	r.step.Lock()
	defer r.step.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paused = p
}

// decideLoop decides what may be decided, every 50 ms until ctx ends.
func (r *scaleRun) decideLoop(ctx context.Context) {
	for {
		r.decidePass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// scaleArgs are the arguments of a write.
type scaleArgs struct {
	Payload struct {
		N    int
		Mark string
	}
}

// decidePass decides every pending request it may, each through a live replica other than the
// one that took its call.
func (r *scaleRun) decidePass(ctx context.Context) {
	list, err := r.st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, Limit: 1000})
	if err != nil {
		if ctx.Err() == nil {
			r.t.Error(err)
		}
		return
	}
	origin := originOf(r.replicas)
	for _, a := range list {
		var args scaleArgs
		if json.Unmarshal(a.Args, &args) != nil || args.Payload.Mark != r.mark {
			continue
		}
		n := args.Payload.N
		from, known := origin[a.ID]
		r.decideOne(a.ID, n, from, known)
	}
}

// decideOne decides request id of write n, whose call replica from took, if it may be decided
// now, through a live replica other than from.
func (r *scaleRun) decideOne(id string, n, from int, known bool) {
	r.step.Lock()
	defer r.step.Unlock()
	r.mu.Lock()
	ok := known && !r.paused && (late(n) && r.late[id] || !late(n) && n < r.below)
	via := -1
	for k := 1; k <= len(r.replicas); k++ {
		if i := (from + k) % len(r.replicas); i != from && !r.dead[i] {
			via = i
			break
		}
	}
	r.mu.Unlock()
	if !ok || via < 0 {
		return
	}
	verb := "deny"
	if approve(n) {
		verb = "approve"
	}
	adminDecide(r.t, &server{addr: strings.TrimSuffix(strings.TrimPrefix(r.replicas[via].url, "http://"), "/mcp")}, r.admin, id, verb)
	r.mu.Lock()
	r.decided[id], r.via[id], r.origin[id] = n, via, from
	if approve(n) {
		r.approved[id] = true
	} else {
		r.denied[id] = true
	}
	r.mu.Unlock()
}

// waitDecided waits until every write below n that is not late is decided.
func (r *scaleRun) waitDecided(n int) {
	r.t.Helper()
	want := 0
	for i := range n {
		if !late(i) {
			want++
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		got := 0
		for _, i := range r.decided {
			if i < n && !late(i) {
				got++
			}
		}
		r.mu.Unlock()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d of the %d writes below %d decided within 30s", got, want, n)
		}
	}
}

// quiet waits, with nothing being decided, until no approved request is left unclaimed and every
// executing one has reached the receiver (so that no run is between its claim and its delivery),
// and returns the executing ones.
func (r *scaleRun) quiet(rcv *hookReceiver) []*store.Approval {
	r.t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		approved, err := r.st.Approvals().List(ctx, store.ApprovalFilter{State: store.StateApproved, Limit: 1000})
		if err != nil {
			r.t.Fatal(err)
		}
		executing, err := r.st.Approvals().List(ctx, store.ApprovalFilter{State: store.StateExecuting, Limit: 1000})
		if err != nil {
			r.t.Fatal(err)
		}
		counts := rcv.counts()
		if len(approved) == 0 && !slices.ContainsFunc(executing, func(a *store.Approval) bool { return counts[a.ID] == 0 }) {
			return executing
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("within 30s with nothing decided, %d requests still approved, %d executing, %d deliveries", len(approved), len(executing), len(counts))
		}
	}
}

// waitingOn counts the undecided requests whose call waits on replica i.
func (r *scaleRun) waitingOn(i int) int {
	list, err := r.st.Approvals().List(context.Background(), store.ApprovalFilter{State: store.StatePending, Limit: 1000})
	if err != nil {
		r.t.Fatal(err)
	}
	origin := originOf(r.replicas)
	r.mu.Lock()
	defer r.mu.Unlock()
	return countFunc(list, func(a *store.Approval) bool { return origin[a.ID] == i && !r.late[a.ID] })
}

// kill sends replica i SIGKILL; nothing is decided through it any more.
func (r *scaleRun) kill(i int) {
	r.replicas[i].kill(r.t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead[i] = true
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
	out := &syncbuf.Buffer{}
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
