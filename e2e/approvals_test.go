package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/legate-mcp/legate/connectors/webhook"
)

// approvalWait is approvals.wait in every config of these tests.
const approvalWait = time.Second

// TestApprovalsWebhook: a write (hooks__send, no policy section) waits approvals.wait and returns
// APPROVAL_PENDING without delivering; "legate approvals approve" (a separate process, while
// "legate serve" runs) delivers it exactly once, with the approval id as delivery id; the same
// call again returns the stored outcome and delivers nothing more; changed arguments need a new
// approval; a denial reaches the caller with its reason. The audit log has the approval ids and
// argument hashes, never argument values.
func TestApprovalsWebhook(t *testing.T) {
	p := need(t)
	t.Parallel()
	start := time.Now()

	secret := "whsec-" + nonce()
	rcv := newHookReceiver(t, secret)
	env := []string{"HOOK_SECRET=" + secret}
	config := approvalsConfig(t, rcv.url, "")
	state := t.TempDir()
	s := serveState(t, config, state, env...)
	url := s.url("127.0.0.1")
	cli := func(args ...string) string {
		return string(legateRun(t, env, append(args, "--config", config, "--state-dir", state)...))
	}

	mark := "mark-" + nonce() // must reach the receiver, never the audit log
	payload1 := map[string]any{"mark": mark, "n": 1}
	payload2 := map[string]any{"mark": mark, "n": 2}

	// 1. The first call waits about approvals.wait, then returns APPROVAL_PENDING; nothing is sent.
	b, out := runBatch(t, p, url, []batchCall{{"hooks__send", map[string]any{"payload": payload1}}})
	at := b.only(t, out)
	id := wantGatewayError(t, "hooks__send (first call)", at.result(t), "APPROVAL_PENDING", "")
	if d := time.Duration(at.Ms) * time.Millisecond; d < approvalWait-100*time.Millisecond || d > approvalWait+5*time.Second {
		t.Errorf("hooks__send (first call): APPROVAL_PENDING after %v, want about approvals.wait (%v)", d, approvalWait)
	}
	if id == "" {
		t.Fatalf("hooks__send: APPROVAL_PENDING without approval_id\n%s", out)
	}
	if n := rcv.total(); n != 0 {
		t.Fatalf("receiver got %d deliveries before any approval, want 0: %v", n, rcv.all())
	}

	// 2. Approved by the CLI: the running server delivers it once, with the approval id.
	if o := cli("approvals", "approve", id); !strings.Contains(o, id) {
		t.Errorf("legate approvals approve %s: output %q does not name the request", id, o)
	}
	rcv.waitTotal(t, 1, 5*time.Second)
	for _, d := range rcv.all() {
		if d.id != id {
			t.Errorf("delivery id %q, want the approval id %q", d.id, id)
		}
		if !strings.Contains(d.body, mark) {
			t.Errorf("delivery body lacks the payload: %s", d.body)
		}
	}

	// 3. The same call again (inspector-cli this time): the stored outcome, nothing sent again.
	raw, _ := json.Marshal(payload1)
	again := p.inspectorCall(t, nil, []string{url, "--transport", "http"}, "hooks__send", "payload="+string(raw))
	if r := decodeResult(t, "hooks__send (again)", again); r != nil {
		if r.IsError {
			t.Errorf("hooks__send again with the same arguments: isError result, want the stored outcome: %s", again)
		} else if got := r.StructuredContent["delivery_id"]; got != id {
			t.Errorf("hooks__send again: delivery_id %v, want the approval id %q: %s", got, id, again)
		}
	}
	time.Sleep(300 * time.Millisecond) // a second delivery would be on its way by now
	if n := rcv.total(); n != 1 {
		t.Errorf("receiver got %d deliveries after the call was made again, want 1: %v", n, rcv.all())
	}

	// 4. Changed arguments need a new approval.
	r, tsOut := p.tsClient(t, nil, "--http", url, "--call", "hooks__send", jsonText(t, map[string]any{"payload": payload2}))
	id2 := wantGatewayError(t, "hooks__send (changed arguments)", tsResultOf(t, r, 0, tsOut), "APPROVAL_PENDING", "")
	if id2 == "" || id2 == id {
		t.Errorf("hooks__send with changed arguments: approval id %q, want a new one (not %q)", id2, id)
	}

	// 5. Denied by the CLI, with a reason: the same call gets APPROVAL_DENIED naming it.
	reason := "not-today-" + nonce()
	cli("approvals", "deny", id2, "--reason", reason)
	r, tsOut = p.tsClient(t, nil, "--http", url, "--call", "hooks__send", jsonText(t, map[string]any{"payload": payload2}))
	if got := wantGatewayError(t, "hooks__send (denied)", tsResultOf(t, r, 0, tsOut), "APPROVAL_DENIED", reason); got != id2 {
		t.Errorf("APPROVAL_DENIED: approval_id %q, want %q", got, id2)
	}
	if n := rcv.total(); n != 1 {
		t.Errorf("receiver got %d deliveries in all, want 1: %v", n, rcv.all())
	}

	// 6. The audit log: rows for both requests, decision approve, arguments only as a hash.
	var rows []map[string]any
	var auditOut string
	deadline := time.Now().Add(5 * time.Second) // rows are written in batches every 200 ms
	for {
		auditOut = cli("audit", "query", "--tool", "hooks.send", "--json")
		rows = jsonLines(t, auditOut)
		if countRows(rows, id) >= 3 && countRows(rows, id2) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// id: the first call, the executor's run, the call made again; id2: its two calls.
	if countRows(rows, id) < 3 || countRows(rows, id2) < 2 {
		t.Errorf("legate audit query --tool hooks.send: %d rows with approval %s (want >= 3) and %d with %s (want >= 2):\n%s",
			countRows(rows, id), id, countRows(rows, id2), id2, auditOut)
	}
	outcomes := map[string]bool{}
	replays := 0
	for _, row := range rows {
		if field(row, "approvalid") == "" {
			t.Errorf("audit row without an approval id (every hooks.send call needed one): %v", row)
		}
		// The call made again got the stored outcome: a replay, not a run.
		switch d := field(row, "decision"); {
		case d == "replay" && field(row, "approvalid") == id:
			replays++
		case d != "approve":
			t.Errorf("audit row decision %q, want approve (or replay, for the call made again): %v", d, row)
		}
		if h := field(row, "argshash"); len(h) != 64 {
			t.Errorf("audit row args hash %q, want a SHA-256 in hex: %v", h, row)
		}
		if field(row, "approvalid") == id2 {
			outcomes[field(row, "outcome")] = true
		}
	}
	if replays != 1 {
		t.Errorf("%d audit rows of %s with decision replay, want 1 (the call made again):\n%s", replays, id, auditOut)
	}
	if !outcomes["APPROVAL_PENDING"] || !outcomes["APPROVAL_DENIED"] {
		t.Errorf("audit rows of %s have outcomes %v, want APPROVAL_PENDING and APPROVAL_DENIED", id2, slices.Sorted(maps.Keys(outcomes)))
	}
	for _, v := range []string{mark, `"n":1`, `"n": 1`} {
		if strings.Contains(auditOut, v) {
			t.Errorf("legate audit query shows an argument value (%q):\n%s", v, auditOut)
		}
	}
	t.Logf("TestApprovalsWebhook took %v", time.Since(start).Round(time.Millisecond))
}

// TestApprovalDurability: 20 pending requests survive kill -9 of "legate serve"; after a restart
// on the same state directory, each is approved through the admin API while three clients per
// request keep calling with its arguments; each is delivered exactly once, with its approval id as
// delivery id, and every caller ends up with the stored outcome.
func TestApprovalDurability(t *testing.T) {
	p := need(t)
	t.Parallel()
	start := time.Now()
	const n, callersPer = 20, 3

	secret, admin := "whsec-"+nonce(), "admin-"+nonce()
	rcv := newHookReceiver(t, secret)
	env := []string{"HOOK_SECRET=" + secret, "LEGATE_ADMIN_TOKEN=" + admin}
	config := approvalsConfig(t, rcv.url, "")
	state := t.TempDir()
	mark := "mark-" + nonce()
	argsOf := func(i int) map[string]any { return map[string]any{"payload": map[string]any{"n": i, "mark": mark}} }

	// 20 requests, made at once through four sessions.
	first := startKillable(t, config, state, env)
	var calls []batchCall
	for i := range n {
		calls = append(calls, batchCall{"hooks__send", argsOf(i)})
	}
	b, out := runBatch(t, p, first.url, calls, "--clients", "4")
	idOf := map[int]string{} // payload n -> approval id
	byID := map[string]int{}
	for i, c := range b.Calls {
		if len(c.Attempts) != 1 {
			t.Fatalf("call %d: %d attempts, want 1\n%s", i, len(c.Attempts), out)
		}
		id := wantGatewayError(t, fmt.Sprintf("hooks__send n=%d", i), c.Attempts[0].result(t), "APPROVAL_PENDING", "")
		if _, dup := byID[id]; dup || id == "" {
			t.Fatalf("call %d: approval id %q is empty or not unique\n%s", i, id, out)
		}
		idOf[i], byID[id] = id, i
	}
	if t.Failed() {
		t.FailNow()
	}

	// kill -9, then a new server on the same state directory: all 20 are still pending.
	first.kill(t)
	second := serveState(t, config, state, env...)
	list := legateRun(t, env, "approvals", "list", "--json", "--config", config, "--state-dir", state)
	var views []struct {
		ID, State, Tool string
		Arguments       json.RawMessage
	}
	if err := json.Unmarshal(list, &views); err != nil {
		t.Fatalf("legate approvals list --json: %v\n%s", err, list)
	}
	listed := map[string]bool{}
	for _, v := range views {
		if v.State != "pending" || v.Tool != "hooks.send" {
			t.Errorf("after kill -9 and restart: request %s is %s for %s, want pending for hooks.send", v.ID, v.State, v.Tool)
		}
		listed[v.ID] = true
	}
	if !maps.Equal(listed, setOf(slices.Collect(maps.Values(idOf)))) {
		t.Fatalf("after kill -9 and restart, legate approvals list --json lists %v, want the 20 pending requests %v\n%s",
			slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Values(idOf)), list)
	}
	if got := rcv.total(); got != 0 {
		t.Fatalf("receiver got %d deliveries before any approval: %v", got, rcv.all())
	}

	// Three callers per request call again, through six sessions, while the admin API approves.
	var recalls []batchCall
	for range callersPer {
		for i := range n {
			recalls = append(recalls, batchCall{"hooks__send", argsOf(i)})
		}
	}
	h := startBatch(t, p, second.url("127.0.0.1"), recalls, "--clients", "6", "--repeat-pending", "45")
	select {
	case <-h.calling:
	case <-h.done:
		t.Fatalf("batch client ended before calling\n%s", h.output())
	case <-time.After(nodeTimeout):
		t.Fatal("batch client did not start calling")
	}
	time.Sleep(200 * time.Millisecond) // let the calls reach the server and wait there
	// Spread over about two waits, so that some land while callers wait and some between their
	// attempts; every other one through the CLI (another process: the server notices it by polling).
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 100 * time.Millisecond)
			if i%2 == 0 {
				adminDecide(t, second, admin, idOf[i], "approve")
			} else if _, err := legateExec(t, env, "approvals", "approve", idOf[i], "--config", config, "--state-dir", state); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	rb, rout := h.wait(t)

	for i, c := range rb.Calls {
		want := idOf[i%n]
		last := c.Attempts[len(c.Attempts)-1]
		res := last.result(t)
		if res == nil {
			t.Errorf("re-call %d (n=%d): no result: %+v", i, i%n, last.Error)
			continue
		}
		if res.IsError {
			t.Errorf("re-call %d (n=%d) ended with an error result after %d attempts, want the stored outcome: %+v", i, i%n, len(c.Attempts), res)
			continue
		}
		if got := res.StructuredContent["delivery_id"]; got != want {
			t.Errorf("re-call %d (n=%d): delivery_id %v, want its approval id %s", i, i%n, got, want)
		}
	}
	if t.Failed() {
		t.Logf("re-calls:\n%s", rout)
	}

	rcv.waitTotal(t, n, 5*time.Second)
	time.Sleep(500 * time.Millisecond) // a duplicate would be on its way by now
	counts := rcv.counts()
	for id, c := range counts {
		if c != 1 {
			t.Errorf("delivery %s arrived %d times, want exactly once", id, c)
		}
	}
	if !maps.Equal(setOf(slices.Collect(maps.Keys(counts))), setOf(slices.Collect(maps.Values(idOf)))) {
		t.Errorf("delivery ids %v, want the approval ids %v", slices.Sorted(maps.Keys(counts)), slices.Sorted(maps.Values(idOf)))
	}
	for _, d := range rcv.all() {
		var body struct{ N int }
		if err := json.Unmarshal([]byte(d.body), &body); err != nil || idOf[body.N] != d.id {
			t.Errorf("delivery %s carries %s, want the payload of its own request", d.id, d.body)
		}
	}
	executed := legateRun(t, env, "approvals", "list", "--state", "executed", "--json", "--config", config, "--state-dir", state)
	if err := json.Unmarshal(executed, &views); err != nil || len(views) != n {
		t.Errorf("legate approvals list --state executed: %d requests (%v), want %d\n%s", len(views), err, n, executed)
	}
	attempts := 0
	for _, c := range rb.Calls {
		attempts += len(c.Attempts)
	}
	t.Logf("%d re-callers made %d calls; TestApprovalDurability took %v", len(rb.Calls), attempts, time.Since(start).Round(time.Millisecond))
}

// TestUpstreamClassesEnforced: upstream tools are classed from their annotations and the policy
// applies to the classes: server-everything's echo (read) runs, server-memory's create_entities
// (write) waits for approval, its delete_entities (destructive) is denied by a rule.
func TestUpstreamClassesEnforced(t *testing.T) {
	p := need(t)
	t.Parallel()
	start := time.Now()

	work := t.TempDir()
	memoryFile := filepath.Join(work, "memory.jsonl")
	const reason = "no deletes through agents"
	config := filepath.Join(work, "config.yaml")
	yaml := fmt.Sprintf(`upstreams:
  - id: ev
    command: %s
  - id: mem
    command: %s
    env: {MEMORY_FILE_PATH: %q}
policy:
  rules:
    - {class: destructive, upstream: "*", action: deny, reason: %q}
approvals:
  wait: %s
`, yamlFlow(p.node, p.everything, "stdio"), yamlFlow(p.node, p.memory), memoryFile, reason, approvalWait)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	s := serveState(t, config, state)

	msg := "hello-" + nonce()
	entity := "entity-" + nonce()
	tools := []string{"mcp__ev__echo", "mcp__mem__create_entities", "mcp__mem__delete_entities"}
	calls := []batchCall{
		{"mcp__ev__echo", map[string]any{"message": msg}},
		{"mcp__mem__create_entities", map[string]any{"entities": []any{map[string]any{"name": entity, "entityType": "test", "observations": []string{"made by e2e"}}}}},
		{"mcp__mem__delete_entities", map[string]any{"entityNames": []string{entity}}},
	}
	// --raw: server-memory's tools declare an outputSchema, and the SDK's callTool checks an
	// isError result's structuredContent against it too (see the subtest "callTool" below).
	b, out := runBatch(t, p, s.url("127.0.0.1"), calls, "--raw", "--wait-tools", strings.Join(tools, ","))
	if !hasAll(b.Tools, tools...) {
		t.Fatalf("tools/list after %dms still lacks some of %v: %v\n%s", b.ToolsWaitMs, tools, b.Tools, out)
	}
	t.Logf("upstream tools listed after %dms", b.ToolsWaitMs)
	if len(b.Calls) != 3 {
		t.Fatalf("batch client made %d calls, want 3\n%s", len(b.Calls), out)
	}

	// read: runs.
	if res := b.Calls[0].Attempts[0].result(t); res == nil || res.IsError {
		t.Errorf("mcp__ev__echo (read): want its result, got %+v\n%s", res, out)
	} else if text := resultText(res); !strings.Contains(text, "Echo: "+msg) {
		t.Errorf("mcp__ev__echo: text %q, want %q in it", text, "Echo: "+msg)
	}

	// write: waits for approval.
	create := b.Calls[1].Attempts[0]
	id := wantGatewayError(t, "mcp__mem__create_entities (write)", create.result(t), "APPROVAL_PENDING", "")
	if create.Ms < (approvalWait - 100*time.Millisecond).Milliseconds() {
		t.Errorf("mcp__mem__create_entities: APPROVAL_PENDING after %dms, want about approvals.wait (%v)", create.Ms, approvalWait)
	}

	// destructive: denied by the rule, with its reason.
	wantGatewayError(t, "mcp__mem__delete_entities (destructive)", b.Calls[2].Attempts[0].result(t), "POLICY_DENIED", reason)

	// Only the write is in the inbox; server-memory never saw it.
	list := legateRun(t, nil, "approvals", "list", "--all", "--json", "--config", config, "--state-dir", state)
	var views []struct{ ID, State, Tool string }
	if err := json.Unmarshal(list, &views); err != nil {
		t.Fatalf("legate approvals list --all --json: %v\n%s", err, list)
	}
	if len(views) != 1 || views[0].ID != id || views[0].Tool != "mcp.mem.create_entities" || views[0].State != "pending" {
		t.Errorf("approval inbox: %+v, want only %s pending for mcp.mem.create_entities", views, id)
	}
	if raw, err := os.ReadFile(memoryFile); err == nil && strings.Contains(string(raw), entity) {
		t.Errorf("server-memory's file holds %s, which no approved call created:\n%s", entity, raw)
	}
	if t.Failed() {
		t.Logf("client output:\n%s", out)
	}

	// The same calls through the SDK's callTool, as an application would make them.
	t.Run("callTool", func(t *testing.T) {
		b, out := runBatch(t, p, s.url("127.0.0.1"), calls[1:])
		var schemaErrs []string
		for _, c := range b.Calls {
			if e := c.Attempts[0].Error; e != nil && strings.Contains(e.Message, "output schema") {
				schemaErrs = append(schemaErrs, c.Name+": "+e.Message)
			}
		}
		if len(schemaErrs) > 0 {
			// A gateway error must not carry structured content that breaks the tool's
			// outputSchema: the SDK's callTool would throw and hide the code and approval id.
			t.Fatalf("gateway errors on upstream tools with an outputSchema are unreadable through callTool:\n%s",
				strings.Join(schemaErrs, "\n"))
		}
		if got := wantGatewayError(t, "callTool mcp__mem__create_entities", b.Calls[0].Attempts[0].result(t), "APPROVAL_PENDING", ""); got != id {
			t.Errorf("callTool mcp__mem__create_entities: approval id %q, want %q (same arguments)", got, id)
		}
		wantGatewayError(t, "callTool mcp__mem__delete_entities", b.Calls[1].Attempts[0].result(t), "POLICY_DENIED", reason)
		if t.Failed() {
			t.Logf("client output:\n%s", out)
		}
	})
	t.Logf("TestUpstreamClassesEnforced took %v", time.Since(start).Round(time.Millisecond))
}

// approvalsConfig writes a config with the webhook instance "hooks" sending to url, no policy
// section (a write needs approval), approvals.wait = approvalWait, and extra appended.
func approvalsConfig(t *testing.T, url, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`connectors:
  - id: hooks
    type: webhook
    config: {url: %q, allow_private_networks: true}
    credentials:
      signing_secret: {env: HOOK_SECRET}
approvals:
  wait: %s
`, url, approvalWait) + extra
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// yamlFlow renders strings as a YAML flow list of JSON-quoted strings.
func yamlFlow(items ...string) string {
	b, _ := json.Marshal(items)
	return string(b)
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func setOf(items []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range items {
		m[s] = true
	}
	return m
}

// legateRun runs "legate ARGS..." with env added and returns its stdout; it fails t if legate
// fails.
func legateRun(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	out, err := legateExec(t, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// legateExec runs "legate ARGS..." with env added, from an empty directory, and returns its
// stdout, or an error with its output; it may be called from any goroutine.
func legateExec(t *testing.T, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, legateBin, args...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("legate %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return []byte(stdout.String()), nil
}

// adminDecide POSTs /admin/v1/approvals/{id}/{verb} with the admin token; it must answer 200.
func adminDecide(t *testing.T, s *server, token, id, verb string) {
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://%s/admin/v1/approvals/%s/%s", s.addr, id, verb), nil)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("POST /admin/v1/approvals/%s/%s: %v", id, verb, err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /admin/v1/approvals/%s/%s: %s %s", id, verb, resp.Status, body)
	}
}

// wantGatewayError checks that res is an isError result with structuredContent.error.code code
// (and reason in its message, when given); it returns structuredContent.error.approval_id.
func wantGatewayError(t *testing.T, what string, res *callResult, code, reason string) string {
	t.Helper()
	if res == nil {
		t.Errorf("%s: no result, want %s", what, code)
		return ""
	}
	e, _ := res.StructuredContent["error"].(map[string]any)
	if e == nil {
		// A tool with an output schema gets the gateway's error in _meta.
		e, _ = res.Meta["io.legate/error"].(map[string]any)
	}
	got, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	if !res.IsError || got != code {
		t.Errorf("%s: isError=%v, structuredContent.error.code %q, want isError and %s: %+v", what, res.IsError, got, code, res)
	}
	if reason != "" && !strings.Contains(msg, reason) {
		t.Errorf("%s: message %q, want the reason %q in it", what, msg, reason)
	}
	id, _ := e["approval_id"].(string)
	return id
}

func resultText(r *callResult) string {
	var texts []string
	for _, c := range r.Content {
		texts = append(texts, c.Text)
	}
	return strings.Join(texts, "\n")
}

// tsResultOf decodes the result of call i of client.mjs's output, failing t on a JSON-RPC error.
func tsResultOf(t *testing.T, r *tsResult, i int, out string) *callResult {
	t.Helper()
	if i >= len(r.Calls) {
		t.Fatalf("TypeScript SDK client made %d calls, want %d\n%s", len(r.Calls), i+1, out)
	}
	if e := r.Calls[i].Error; e != nil {
		t.Fatalf("%s: JSON-RPC error %d %s\n%s", r.Calls[i].Name, e.Code, e.Message, out)
	}
	return decodeResult(t, r.Calls[i].Name, r.Calls[i].Result)
}

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON object: %v: %s", err, line)
		}
		rows = append(rows, m)
	}
	return rows
}

// field returns the string value of the key of row whose name, lowercased and without
// underscores, is name ("ApprovalID" and "approval_id" are both "approvalid").
func field(row map[string]any, name string) string {
	for k, v := range row {
		if strings.ReplaceAll(strings.ToLower(k), "_", "") == name {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

func countRows(rows []map[string]any, approvalID string) int {
	n := 0
	for _, r := range rows {
		if field(r, "approvalid") == approvalID {
			n++
		}
	}
	return n
}

// hookReceiver is a webhook receiver that records every delivery and verifies its signature
// with webhook.Verify. It takes POST /hook, or /hook/NAME when instances post to it under names
// of their own (delivery.path tells which).
type hookReceiver struct {
	url string // where the webhook instance posts

	mu         sync.Mutex
	deliveries []delivery
	gate       chan struct{} // while set (hold), deliveries are recorded, then answered once it is closed
}

func newHookReceiver(t *testing.T, secret string) *hookReceiver {
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d := delivery{id: r.Header.Get("X-Legate-Delivery"), body: string(body), path: r.URL.Path}
		if r.Method != http.MethodPost || (r.URL.Path != "/hook" && path.Dir(r.URL.Path) != "/hook") {
			d.sigErr = fmt.Errorf("got %s %s, want POST /hook", r.Method, r.URL.Path)
		} else {
			d.sigErr = webhook.Verify(secret, r.Header.Get("X-Legate-Signature"), body, 5*time.Minute, time.Now())
		}
		h.mu.Lock()
		gate := h.gate
		d.held = gate != nil
		h.deliveries = append(h.deliveries, d)
		h.mu.Unlock()
		if gate != nil {
			<-gate
		}
		if d.sigErr != nil {
			http.Error(w, d.sigErr.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(h.release) // before srv.Close, which waits for the held deliveries
	h.url = srv.URL + "/hook"
	t.Cleanup(func() {
		for _, d := range h.all() {
			if d.sigErr != nil {
				t.Errorf("delivery %q: %v", d.id, d.sigErr)
			}
			if d.id == "" {
				t.Errorf("a delivery without X-Legate-Delivery: %s", d.body)
			}
		}
	})
	return h
}

// hold makes the deliveries arriving from now on wait for release before they are answered:
// their calls stay executing, with their deliveries recorded.
func (h *hookReceiver) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate == nil {
		h.gate = make(chan struct{})
	}
}

// release answers the held deliveries and stops holding.
func (h *hookReceiver) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

func (h *hookReceiver) all() []delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.deliveries)
}

func (h *hookReceiver) total() int { return len(h.all()) }

// counts is the number of deliveries by delivery id.
func (h *hookReceiver) counts() map[string]int {
	c := map[string]int{}
	for _, d := range h.all() {
		c[d.id]++
	}
	return c
}

// waitTotal waits up to timeout until n deliveries arrived; it fails t if they did not, or if
// more did.
func (h *hookReceiver) waitTotal(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for h.total() < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := h.total(); got != n {
		t.Fatalf("receiver got %d deliveries within %v, want %d: %v", got, timeout, n, h.all())
	}
}

// killable is a "legate serve" that the test can kill -9.
type killable struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
	output *syncbuf.Buffer
}

// startKillable starts "legate serve" on stateDir like serveState, but keeps the process so that
// kill can SIGKILL it.
func startKillable(t *testing.T, config, stateDir string, env []string) *killable {
	t.Helper()
	var lastErr error
	for range 3 {
		k, err := tryKillable(t, config, stateDir, env)
		if err == nil {
			return k
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

func tryKillable(t *testing.T, config, stateDir string, env []string) (*killable, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	k := &killable{url: "http://" + addr + "/mcp", exited: make(chan struct{}), output: &syncbuf.Buffer{}}
	k.cmd = exec.Command(legateBin, "serve", "--listen", addr, "--state-dir", stateDir, "--config", config)
	k.cmd.Dir = t.TempDir()
	k.cmd.Env = append(os.Environ(), env...)
	k.cmd.Stdout, k.cmd.Stderr = k.output, k.output
	if err := k.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = k.cmd.Wait(); close(k.exited) }()
	t.Cleanup(func() {
		select {
		case <-k.exited:
		default:
			_ = k.cmd.Process.Kill()
			<-k.exited
		}
		if t.Failed() {
			t.Logf("legate serve (killed) output:\n%s", k.output)
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-k.exited:
			return nil, fmt.Errorf("legate serve exited before it was healthy: %v\n%s", k.cmd.ProcessState, k.output)
		default:
		}
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return k, nil
			}
		}
		if time.Now().After(deadline) {
			_ = k.cmd.Process.Kill()
			return nil, fmt.Errorf("legate serve: /healthz not 200 within 15s\n%s", k.output)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL (kill -9) and waits for the process to end.
func (k *killable) kill(t *testing.T) {
	t.Helper()
	if err := k.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill -9 legate serve: %v", err)
	}
	select {
	case <-k.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("legate serve still runs 10s after SIGKILL")
	}
	if ws, ok := k.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("legate serve ended with %v, want killed by SIGKILL", k.cmd.ProcessState)
	}
}

// batchCall is one call for e2e/node/batch.mjs.
type batchCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

// batchOut is what e2e/node/batch.mjs prints.
type batchOut struct {
	Tools       []string `json:"tools"`
	ToolsWaitMs int64    `json:"toolsWaitMs"`
	Calls       []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Attempts  []batchAttempt  `json:"attempts"`
	} `json:"calls"`
}

type batchAttempt struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Ms int64 `json:"ms"`
}

// result decodes the attempt's result; nil (and t failed) when the call got a JSON-RPC error.
func (a batchAttempt) result(t *testing.T) *callResult {
	t.Helper()
	if a.Error != nil {
		t.Errorf("JSON-RPC error %d %s", a.Error.Code, a.Error.Message)
		return nil
	}
	return decodeResult(t, "tools/call", a.Result)
}

// only returns the single attempt of the single call of b.
func (b *batchOut) only(t *testing.T, out string) batchAttempt {
	t.Helper()
	if len(b.Calls) != 1 || len(b.Calls[0].Attempts) != 1 {
		t.Fatalf("batch client: want one call made once\n%s", out)
	}
	return b.Calls[0].Attempts[0]
}

// runBatch runs e2e/node/batch.mjs against url with calls and extra options, and decodes its output.
func runBatch(t *testing.T, p *peerSet, url string, calls []batchCall, opts ...string) (*batchOut, string) {
	t.Helper()
	return startBatch(t, p, url, calls, opts...).wait(t)
}

// batchRun is a running batch.mjs.
type batchRun struct {
	calling chan struct{} // closed when it prints "calling"
	done    chan struct{} // closed when it ended
	err     error
	stdout  syncbuf.Buffer
	stderr  syncbuf.Buffer
}

func (b *batchRun) output() string {
	return fmt.Sprintf("stdout:\n%s\nstderr:\n%s", b.stdout.String(), b.stderr.String())
}

func startBatch(t *testing.T, p *peerSet, url string, calls []batchCall, opts ...string) *batchRun {
	t.Helper()
	file := filepath.Join(t.TempDir(), "calls.json")
	if err := os.WriteFile(file, []byte(jsonText(t, calls)), 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("node", "batch.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	cmd := exec.CommandContext(ctx, p.node, append([]string{script, "--http", url, "--calls", file}, opts...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = p.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	b := &batchRun{calling: make(chan struct{}), done: make(chan struct{})}
	cmd.Stdout = &b.stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var once sync.Once
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			if sc.Text() == "calling" {
				once.Do(func() { close(b.calling) })
			}
			b.stderr.Write(append(sc.Bytes(), '\n'))
		}
		_, _ = io.Copy(&b.stderr, errPipe)
	}()
	go func() {
		<-copied // Wait closes the pipe: read it to the end first
		b.err = cmd.Wait()
		if ctx.Err() != nil {
			b.err = errors.Join(b.err, fmt.Errorf("timed out after %v", nodeTimeout))
		}
		cancel()
		close(b.done)
	}()
	t.Cleanup(func() { cancel(); <-b.done })
	return b
}

// wait waits for the batch to end and decodes its output; it fails t if the batch failed.
func (b *batchRun) wait(t *testing.T) (*batchOut, string) {
	t.Helper()
	<-b.done
	if b.err != nil {
		t.Fatalf("batch client: %v\n%s", b.err, b.output())
	}
	var out batchOut
	if err := json.Unmarshal([]byte(b.stdout.String()), &out); err != nil {
		t.Fatalf("batch client: decoding its output: %v\n%s", err, b.output())
	}
	return &out, b.output()
}
