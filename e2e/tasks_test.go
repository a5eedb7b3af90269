package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tasksScenarios are the conformance suite's scenarios of the tasks extension (SEP-2663) and
// what each gives against Legate serving calls held for approval as tasks (docs/clients.md,
// "Tasks"): "pass", or why it does not apply to held calls. A scenario that does not apply must
// still fail by the checks named, so that a change in the suite or in Legate shows here.
var tasksScenarios = map[string]string{
	"tasks-lifecycle":              "pass",
	"tasks-capability-negotiation": "pass",
	"tasks-wire-fields":            "pass",
	"tasks-request-state-removal":  "pass",
	"tasks-request-headers":        "pass",
	"tasks-dispatch-and-envelope":  "pass",
	// A held call asks its client one thing at most, whether to run (confirm: client, answered
	// {confirm: true}): no held call asks two things at once (multi_input).
	"tasks-mrtr-input": "tasks-mrtr-partial-fulfillment",
	// Legate answers a held call without the extension as before (APPROVAL_PENDING): no tool
	// requires the extension.
	"tasks-required-task-error": "sep-2663-server-returns-missing-capability-when-required",
	// A tool that asks by input_required and then escalates to a task (test_tool_with_task): a held
	// call asks only within its task. An upstream's task made so would be handed through, as
	// TestUpstreamTaskHandedThrough's are, but no server here makes one.
	"tasks-mrtr-composition": "sep-2663-mrtr-synchronous-before-task-creation",
	// Skipped by the suite itself (pending its subscriptions/listen rewrite).
	"tasks-status-notifications": "skipped",
}

// TestTasksConformance: the conformance suite's tasks-* scenarios against Legate, whose policy
// holds the calls of the scenarios' task-supporting tools (the fixture below, a transparent
// upstream) for approval; an approver decides through the admin API as the requests come: it
// approves every request but protocol_error_job's, which it denies, and leaves slow_compute of
// 60 seconds pending, which the scenarios cancel, and confirm_delete's, which a rule with
// confirm: client has the client decide (input_required). greet is read-only, so allowed. Each
// scenario passes, or fails by exactly the checks tasksScenarios names.
func TestTasksConformance(t *testing.T) {
	p := need(t)
	t.Parallel()
	s, _ := tasksGateway(t)
	checkTasksScenarios(t, p, s.url("localhost"))
}

// TestTasksConformanceHandedThrough: the same scenarios against a Legate (the edge) whose one
// upstream, spoken to at 2026-07-28 and transparent, is TestTasksConformance's Legate: the tasks
// are that upstream's, handed through by the edge under its own ids, and each scenario gives what
// it gives against the upstream directly. The upstream's own built-in tools are left out, as
// their names are the edge's.
func TestTasksConformanceHandedThrough(t *testing.T) {
	p := need(t)
	t.Parallel()
	team, _ := tasksGateway(t)
	checkTasksScenarios(t, p, tasksEdge(t, team).url("localhost"))
}

// tasksEdge serves a Legate (the edge) whose one upstream is team, transparent, spoken to at
// 2026-07-28, without its built-in tools (their names are the edge's), and whose policy allows
// every call: the tasks of team's held calls are handed through.
func tasksEdge(t *testing.T, team *server) *server {
	config := upstreamConfig(t, fmt.Sprintf("upstreams:\n  - id: team\n    url: %s\n    prefix: false\n    protocol_version: 2026-07-28\n    tools: {exclude: [legate__*]}\n", team.url("127.0.0.1")))
	state := t.TempDir()
	refreshUpstreams(t, config, state, "team")
	return serveState(t, config, state)
}

// checkTasksScenarios runs every scenario of tasksScenarios against the server at url: each
// passes, or fails by exactly the checks named.
func checkTasksScenarios(t *testing.T, p *peerSet, url string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(tasksScenarios)) {
		want := tasksScenarios[name]
		failed, ran := runScenario(t, p, url, name)
		t.Logf("%s: %d checks; failed: %v", name, ran, failed)
		switch want {
		case "pass":
			if ran == 0 || len(failed) > 0 {
				t.Errorf("%s: want it to pass; failed: %v", name, failed)
			}
		case "skipped":
			if len(failed) > 0 {
				t.Errorf("%s: want it skipped; failed: %v", name, failed)
			}
		default:
			var ids []string
			for id := range failed {
				ids = append(ids, id)
			}
			if got := strings.Join(slices.Sorted(slices.Values(ids)), " "); got != want {
				t.Errorf("%s: failed checks %q, want exactly %q (they do not apply to held calls): %v", name, got, want, failed)
			}
		}
	}
}

// tasksGateway serves Legate with tasksFixture as its transparent upstream, confirm_delete held
// under confirm: client, and an approver that decides its other requests as they come (approver),
// until t ends. It returns the server and its admin token.
func tasksGateway(t *testing.T) (*server, string) {
	config, state, admin := tasksConfig(t)
	s := serveState(t, config, state, "LEGATE_ADMIN_TOKEN="+admin)
	startApprover(t, s, admin)
	return s, admin
}

// tasksConfig writes tasksGateway's configuration and fills its upstream's tool cache in a new
// state directory; it returns both, and the admin token to serve with.
func tasksConfig(t *testing.T) (config, state, admin string) {
	up := tasksFixture(t)
	admin = "admin-" + nonce()
	config = filepath.Join(t.TempDir(), "config.yaml")
	doc := fmt.Sprintf("approvals: {wait: 1s}\nupstreams:\n  - id: tasks\n    url: %s\n    prefix: false\n"+
		"policy:\n  rules:\n    - {tool: confirm_delete, action: approve, confirm: client}\n", up)
	if err := os.WriteFile(config, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	state = t.TempDir()
	refreshUpstreams(t, config, state, "tasks")
	return config, state, admin
}

// startApprover runs approver on s until t ends.
func startApprover(t *testing.T, s *server, admin string) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); approver(ctx, t, s, admin) }()
	t.Cleanup(func() { stop(); <-done })
}

// runScenario runs one scenario of the 2026-07-28 suite against url and returns its failed
// checks (id → message) and how many checks it reported.
func runScenario(t *testing.T, p *peerSet, url, name string) (failed map[string]string, checks int) {
	t.Helper()
	dir := t.TempDir()
	stdout, stderr, _ := p.runNode(t, dir, nil, p.conformance2026, "server", "--url", url, "--scenario", name, "-o", dir)
	files, _ := filepath.Glob(filepath.Join(dir, "server-"+name+"-*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("%s: no checks.json\nstdout:\n%s\nstderr:\n%s", name, stdout, stderr)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID, Status, ErrorMessage string
		Details                  json.RawMessage
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("%s: checks.json: %v", name, err)
	}
	failed = map[string]string{}
	for _, c := range list {
		if c.Status == "FAILURE" || c.Status == "WARNING" {
			failed[c.ID] = c.ErrorMessage + " " + string(c.Details)
		}
	}
	return failed, len(list)
}

// approver decides the pending requests of s as they come, through the admin API, until ctx
// ends (TestTasksConformance says how).
func approver(ctx context.Context, t *testing.T, s *server, token string) {
	decided := map[string]bool{}
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/admin/v1/approvals?state=pending", s.addr), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		var list struct {
			Approvals []struct {
				ID, Tool  string
				Arguments struct {
					Seconds float64 `json:"seconds"`
				}
			}
		}
		json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		for _, a := range list.Approvals {
			tool := a.Tool[strings.LastIndex(a.Tool, ".")+1:] // canonical: the upstream's name, prefix: false
			if decided[a.ID] || tool == "slow_compute" && a.Arguments.Seconds >= 60 || tool == "confirm_delete" {
				continue
			}
			verb := "approve"
			if tool == "protocol_error_job" {
				verb = "deny"
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://%s/admin/v1/approvals/%s/%s", s.addr, a.ID, verb), nil)
			req.Header.Set("Authorization", "Bearer "+token)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				decided[a.ID] = true
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tasksFixture serves on 127.0.0.1 the tools the tasks-* scenarios call, as plain tools (the
// tasks are Legate's): greet (read-only), slow_compute, failing_job (a tool error),
// protocol_error_job (a JSON-RPC error) and confirm_delete. It returns its MCP endpoint.
func tasksFixture(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "tasks-fixture", Version: "1"}, nil)
	obj := &mcp.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}
	tool := func(name string, readOnly bool, h func(args map[string]any) (*mcp.CallToolResult, error)) {
		tl := *obj
		tl.Name = name
		if readOnly {
			tl.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		s.AddTool(&tl, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			json.Unmarshal(req.Params.Arguments, &args)
			return h(args)
		})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	tool("greet", true, func(a map[string]any) (*mcp.CallToolResult, error) {
		return text(fmt.Sprintf("Hello, %v!", a["name"])), nil
	})
	tool("slow_compute", false, func(a map[string]any) (*mcp.CallToolResult, error) {
		secs, _ := a["seconds"].(float64)
		time.Sleep(time.Duration(secs * float64(time.Second)))
		return text(fmt.Sprintf("computed %v", a["label"])), nil
	})
	tool("failing_job", false, func(map[string]any) (*mcp.CallToolResult, error) {
		res := text("the job failed")
		res.IsError = true
		return res, nil
	})
	tool("protocol_error_job", false, func(map[string]any) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the job broke"}
	})
	tool("confirm_delete", false, func(a map[string]any) (*mcp.CallToolResult, error) {
		return text(fmt.Sprintf("deleted %v", a["filename"])), nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// tasksClientOut is what e2e/node/tasks-client.mjs prints.
type tasksClientOut struct {
	Protocol string
	Calls    []tasksClientCall
}

// tasksClientCall is one call's record in tasksClientOut.
type tasksClientCall struct {
	Name, Kind, TaskID, Status string
	States                     []string
	Result                     struct {
		ResultType string
		Content    []struct{ Text string }
		IsError    bool
	}
	Error     *struct{ Message string }
	Exception *struct{ Name, Message, Cause string }
	Asked     []struct{ Kind, Message string }
	Reference json.RawMessage // a handed-off task's
}

// text is the text of a one-block result, or "".
func (c tasksClientCall) text() string {
	if len(c.Result.Content) == 1 {
		return c.Result.Content[0].Text
	}
	return ""
}

// runTasksClient runs e2e/node/tasks-client.mjs against s with calls, checks that it speaks
// 2026-07-28 and that no call threw, and returns what it printed, a record per call.
func runTasksClient(t *testing.T, p *peerSet, s *server, calls string) tasksClientOut {
	t.Helper()
	stdout, stderr, err := p.runNode(t, t.TempDir(), nil, p.tasksClient, s.url("127.0.0.1"), "token", calls)
	if err != nil {
		t.Fatalf("tasks-client: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	var out tasksClientOut
	var want []json.RawMessage
	if err := json.Unmarshal(stdout, &out); err != nil || json.Unmarshal([]byte(calls), &want) != nil || len(out.Calls) != len(want) {
		t.Fatalf("tasks-client printed %s (%v)\nstderr:\n%s", stdout, err, stderr)
	}
	if out.Protocol != "2026-07-28" {
		t.Errorf("protocol %q, want 2026-07-28", out.Protocol)
	}
	for _, c := range out.Calls {
		if c.Exception != nil {
			t.Errorf("%s: %s: %s (%s)", c.Name, c.Exception.Name, c.Exception.Message, c.Exception.Cause)
		}
	}
	return out
}

// TestTasksClientLibrary: a client built on the official tasks requester (@modelcontextprotocol/ext-tasks,
// e2e/node/tasks-client.mjs) calls tools through Legate as an application would, and settles
// each call: a read-only tool answers at once; a held call is a task that completes with the
// tool's result once approved (a 2026-07-28 result: resultType complete), fails once denied,
// and is cancelled by the client's cancel, which withdraws its approval request; a call under a
// rule with confirm: client asks the client (input_required), whose user's yes runs it. The same
// through a Legate whose upstream is that Legate: the tasks are the upstream's, handed through.
func TestTasksClientLibrary(t *testing.T) {
	p := need(t)
	t.Parallel()
	for _, through := range []string{"Legate", "a Legate whose upstream is that Legate"} {
		t.Run(through, func(t *testing.T) {
			// A Legate of its own: the same call again would get the first one's outcome.
			team, admin := tasksGateway(t)
			s := team
			if through != "Legate" {
				s = tasksEdge(t, team) // the tasks are team's, handed through
			}
			checkTasksClient(t, p, s, team, admin)
		})
	}
}

// checkTasksClient drives the tasks requester through s, whose calls team holds (team decided by
// its approver, its admin token admin), and checks how each call settles.
func checkTasksClient(t *testing.T, p *peerSet, s, team *server, admin string) {
	out := runTasksClient(t, p, s, `[{"name": "greet", "arguments": {"name": "Ada"}},
		{"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "sum"}},
		{"name": "protocol_error_job", "arguments": {}},
		{"name": "slow_compute", "arguments": {"seconds": 60, "label": "never"}, "cancel": true},
		{"name": "confirm_delete", "arguments": {"filename": "a.txt"}}]`)
	text := func(i int) string { return out.Calls[i].text() }
	if c := out.Calls[0]; c.Kind != "immediate" || c.Status != "completed" || text(0) != "Hello, Ada!" {
		t.Errorf("greet: kind %q, status %q, text %q; want an immediate result, Hello, Ada!", c.Kind, c.Status, text(0))
	}
	if c := out.Calls[1]; c.Kind != "task" || c.Status != "completed" || text(1) != "computed sum" || c.Result.ResultType != "complete" ||
		len(c.States) == 0 || c.States[0] != "working" || c.States[len(c.States)-1] != "completed" {
		t.Errorf("slow_compute: kind %q, states %v, status %q, result %+v; want a task, working then completed, computed sum, resultType complete",
			c.Kind, c.States, c.Status, c.Result)
	}
	if c := out.Calls[2]; c.Kind != "task" || c.Status != "failed" || c.Error == nil || !strings.Contains(c.Error.Message, "denied") {
		t.Errorf("protocol_error_job: kind %q, status %q, error %+v; want a task that failed, denied", c.Kind, c.Status, c.Error)
	}
	if c := out.Calls[3]; c.Kind != "task" || c.Status != "cancelled" {
		t.Errorf("cancelled slow_compute: kind %q, status %q, states %v; want a task, cancelled", c.Kind, c.Status, c.States)
	}
	if c := out.Calls[4]; c.Kind != "task" || c.Status != "completed" || text(4) != "deleted a.txt" || len(c.Asked) != 1 ||
		c.Asked[0].Kind != "elicitation" || !slices.Contains(c.States, "input_required") {
		t.Errorf("confirm_delete: kind %q, states %v, asked %+v, status %q, text %q; want a task asking its user once, then deleted a.txt",
			c.Kind, c.States, c.Asked, c.Status, text(4))
	}
	// The cancel withdrew the request: denied by its caller, nothing left pending.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, fmt.Sprintf("http://%s/admin/v1/approvals?state=pending", team.addr), nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var pending struct{ Approvals []struct{ ID, Tool string } }
	json.NewDecoder(resp.Body).Decode(&pending)
	if len(pending.Approvals) != 0 {
		t.Errorf("pending after the calls settled: %+v, want none (the cancelled task's request withdrawn)", pending.Approvals)
	}
}

// TestTasksClientLibraryAcrossRestart: the tasks requester hands a held call's task off (its
// reference persisted, as an application that goes away does), Legate restarts on the same
// state, the request is approved, and a new client session resumes the task from the
// reference and gets the tool's result.
func TestTasksClientLibraryAcrossRestart(t *testing.T) {
	p := need(t)
	t.Parallel()
	config, state, admin := tasksConfig(t)
	s := serveState(t, config, state, "LEGATE_ADMIN_TOKEN="+admin)
	first := runTasksClient(t, p, s, `[{"name": "slow_compute", "arguments": {"seconds": 0.1, "label": "later"}, "handoff": true}]`)
	handed := first.Calls[0]
	if handed.Kind != "task" || len(handed.Reference) == 0 {
		t.Fatalf("slow_compute: kind %q, reference %s; want a task handed off", handed.Kind, handed.Reference)
	}

	if err := syscall.Kill(s.pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err != nil {
			break // stopped
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("legate serve did not stop within 10s of SIGTERM")
		}
	}
	s = serveState(t, config, state, "LEGATE_ADMIN_TOKEN="+admin)
	startApprover(t, s, admin)

	ref, _ := json.Marshal([]map[string]json.RawMessage{{"resume": handed.Reference}})
	c := runTasksClient(t, p, s, string(ref)).Calls[0]
	if c.Kind != "task" || c.TaskID != handed.TaskID || c.Status != "completed" || c.text() != "computed later" {
		t.Errorf("resumed after the restart: kind %q, task %q (handed off %q), states %v, status %q, text %q; want the task completed, computed later",
			c.Kind, c.TaskID, handed.TaskID, c.States, c.Status, c.text())
	}
}
