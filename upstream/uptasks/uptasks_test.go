package uptasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/upstream/uptasks"
)

// standIn is an upstream of protocol 2025-11-25 that speaks the task
// methods, on an in-memory connection. Its tools:
//   - research (task-required): working through two status messages, one
//     per tasks/get, then completed with the report;
//   - breaks: working, then failed ("disk full");
//   - withdrawn: working, then cancelled by the upstream;
//   - hangs: working until cancelled;
//   - asks: input_required at once;
//   - wakes: a poll interval of an hour, completed by the upstream on its
//     own, which it says with notifications/tasks/status;
//   - plain (no execution): answered at once, without a task.
type standIn struct {
	t    *testing.T
	conn mcp.Connection

	mu        sync.Mutex
	tasks     map[string]*fakeTask
	taskAsked map[string]bool // tools/call params.task seen, by tool
	cancelled []string        // tasks/cancel's task ids
	lists     int             // tools/list requests
	waiting   map[string][]jsonrpc.ID
}

type fakeTask struct {
	id, tool string
	steps    []step // what each tasks/get moves it to
	now      step
}

type step struct{ status, message string }

var scripts = map[string][]step{
	"research":  {{"working", "Gathering sources"}, {"working", "Analyzing content"}, {"working", "Analyzing content"}, {"completed", ""}},
	"breaks":    {{"working", "Reading"}, {"failed", "disk full"}},
	"withdrawn": {{"working", "Reading"}, {"cancelled", "withdrawn by its owner"}},
	"hangs":     {{"working", "Waiting"}},
	"asks":      {{"input_required", "Which one?"}},
	"wakes":     {{"working", "Sleeping"}},
}

func startStandIn(t *testing.T) (*standIn, mcp.Transport) {
	server, client := mcp.NewInMemoryTransports()
	conn, err := server.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := &standIn{t: t, conn: conn, tasks: map[string]*fakeTask{}, taskAsked: map[string]bool{}, waiting: map[string][]jsonrpc.ID{}}
	go s.serve()
	t.Cleanup(func() { conn.Close() })
	return s, client
}

func (s *standIn) serve() {
	ctx := context.Background()
	for {
		msg, err := s.conn.Read(ctx)
		if err != nil {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		res, rerr := s.answer(req)
		if res == nil && rerr == nil {
			continue // answered later (tasks/result)
		}
		s.reply(req.ID, res, rerr)
		if req.Method == "tools/call" && strings.Contains(string(req.Params), `"wakes"`) {
			s.wake("task-wakes")
		}
	}
}

// wake completes task id on the upstream's own, and says so.
func (s *standIn) wake(id string) {
	s.mu.Lock()
	ft := s.tasks[id]
	ft.now = step{"completed", ""}
	w := ft.wire()
	s.mu.Unlock()
	s.notify("notifications/tasks/status", w)
	s.finish(ft)
}

func (s *standIn) reply(id jsonrpc.ID, res any, rerr error) {
	out := &jsonrpc.Response{ID: id, Error: rerr}
	if rerr == nil {
		out.Result, _ = json.Marshal(res)
	}
	s.conn.Write(context.Background(), out)
}

func (s *standIn) notify(method string, params any) {
	raw, _ := json.Marshal(params)
	s.conn.Write(context.Background(), &jsonrpc.Request{Method: method, Params: raw})
}

func (s *standIn) answer(req *jsonrpc.Request) (any, error) {
	var p struct {
		Name   string          `json:"name"`
		Task   json.RawMessage `json:"task"`
		TaskID string          `json:"taskId"`
	}
	json.Unmarshal(req.Params, &p)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Method {
	case "initialize":
		return map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "stand-in", "version": "1"},
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}}, nil
	case "tools/list":
		s.lists++
		tools := []map[string]any{{"name": "plain", "inputSchema": map[string]any{"type": "object"}}}
		for name := range scripts {
			tools = append(tools, map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "required"}})
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		s.taskAsked[p.Name] = p.Task != nil
		if p.Name == "plain" {
			return text("plain answer"), nil
		}
		if p.Task == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "requires task augmentation"}
		}
		ft := &fakeTask{id: "task-" + p.Name, tool: p.Name, steps: scripts[p.Name][1:], now: scripts[p.Name][0]}
		s.tasks[ft.id] = ft
		return map[string]any{"task": ft.wire()}, nil
	case "tasks/get":
		ft, ok := s.tasks[p.TaskID]
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such task"}
		}
		if len(ft.steps) > 0 {
			ft.now, ft.steps = ft.steps[0], ft.steps[1:]
		}
		if ft.now.status == "completed" {
			go s.finish(ft)
		}
		return ft.wire(), nil
	case "tasks/result":
		ft, ok := s.tasks[p.TaskID]
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such task"}
		}
		switch ft.now.status {
		case "completed":
			return ft.result(), nil
		case "failed", "cancelled":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no result"}
		}
		s.waiting[ft.id] = append(s.waiting[ft.id], req.ID)
		return nil, nil
	case "tasks/cancel":
		s.cancelled = append(s.cancelled, p.TaskID)
		if ft, ok := s.tasks[p.TaskID]; ok {
			ft.now, ft.steps = step{"cancelled", "cancelled by the client"}, nil
			return ft.wire(), nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such task"}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: req.Method}
}

// finish answers the tasks/result requests waiting for ft.
func (s *standIn) finish(ft *fakeTask) {
	s.mu.Lock()
	ids := s.waiting[ft.id]
	delete(s.waiting, ft.id)
	s.mu.Unlock()
	for _, id := range ids {
		s.reply(id, ft.result(), nil)
	}
}

func (ft *fakeTask) wire() map[string]any {
	w := map[string]any{"taskId": ft.id, "status": ft.now.status, "ttl": 60000, "createdAt": "2026-01-01T00:00:00Z",
		"lastUpdatedAt": "2026-01-01T00:00:00Z", "pollInterval": 10}
	if ft.tool == "wakes" {
		w["pollInterval"] = 3600000
	}
	if ft.now.message != "" {
		w["statusMessage"] = ft.now.message
	}
	return w
}

func (ft *fakeTask) result() map[string]any {
	r := text("report of " + ft.tool)
	r["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": ft.id}}
	return r
}

func text(s string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": s}}}
}

// connect opens a go-sdk client session on the stand-in through a link,
// and lists its tools, as discovery does.
func connect(t *testing.T) (*standIn, *uptasks.Link, *mcp.ClientSession) {
	s, link, cs := connectUnlisted(t)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return s, link, cs
}

// connectUnlisted is connect without the listing.
func connectUnlisted(t *testing.T) (*standIn, *uptasks.Link, *mcp.ClientSession) {
	s, tr := startStandIn(t)
	link := uptasks.NewLink(uptasks.NewTools("up"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "legate", Version: "test"}, nil).
		Connect(t.Context(), link.Wrap(tr), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return s, link, cs
}

// progress gathers what a call relays.
type progress struct {
	mu   sync.Mutex
	seen []*mcp.ProgressNotificationParams
}

func (p *progress) caller(canAsk bool) uptasks.Caller {
	return uptasks.Caller{Token: "tok", CanAsk: canAsk, Progress: func(n *mcp.ProgressNotificationParams) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.seen = append(p.seen, n)
	}}
}

func (p *progress) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for i, n := range p.seen {
		if n.ProgressToken != "tok" || n.Progress != float64(i+1) {
			return append(out, "bad notification")
		}
		out = append(out, n.Message)
	}
	return out
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) != 1 {
		return ""
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

func TestListingMarksTaskRequiredTools(t *testing.T) {
	_, link, _ := connect(t)
	for name, want := range map[string]bool{"research": true, "hangs": true, "plain": false, "unknown": false} {
		if got := link.Required(name); got != want {
			t.Errorf("Required(%q) = %v, want %v", name, got, want)
		}
	}
	var nilLink *uptasks.Link
	if nilLink.Required("research") {
		t.Error("a nil link runs no task")
	}
}

func TestTaskCompletes(t *testing.T) {
	for _, canAsk := range []bool{false, true} {
		s, link, cs := connect(t)
		var p progress
		res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"topic": "x"}}, p.caller(canAsk))
		if err != nil {
			t.Fatal(err)
		}
		if got := textOf(res); got != "report of research" || res.IsError {
			t.Errorf("canAsk %v: result %q (isError %v), want the report", canAsk, got, res.IsError)
		}
		if _, ok := res.Meta["io.modelcontextprotocol/related-task"]; ok {
			t.Error("the result names the upstream's task, which the caller never saw")
		}
		// Each status message once, in order; the last (completed) has none.
		want := []string{"Gathering sources", "Analyzing content", "completed"}
		if got := p.messages(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("canAsk %v: progress %q, want %q", canAsk, got, want)
		}
		s.mu.Lock()
		if !s.taskAsked["research"] || len(s.cancelled) != 0 {
			t.Errorf("task asked %v, cancelled %v", s.taskAsked["research"], s.cancelled)
		}
		s.mu.Unlock()
	}
}

// A call before any listing lists the upstream first, once.
func TestCallBeforeAnyListing(t *testing.T) {
	s, link, cs := connectUnlisted(t)
	var p progress
	for range 2 {
		res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: "plain"}, p.caller(true))
		if err != nil || textOf(res) != "plain answer" {
			t.Fatalf("got %q, %v", textOf(res), err)
		}
	}
	res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: "research"}, p.caller(true))
	if err != nil || textOf(res) != "report of research" {
		t.Fatalf("got %q, %v", textOf(res), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists != 1 {
		t.Errorf("%d listings, want 1", s.lists)
	}
}

func TestStatusNotificationWakesTheCall(t *testing.T) {
	_, link, cs := connect(t)
	var p progress
	// Polled only every hour: the notification is what ends the wait.
	res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: "wakes"}, p.caller(false))
	if err != nil || textOf(res) != "report of wakes" {
		t.Fatalf("got %q, %v", textOf(res), err)
	}
}

func TestTaskEndsFailedOrCancelled(t *testing.T) {
	for name, want := range map[string]string{
		"breaks":    "upstream up's task task-breaks ended failed: disk full",
		"withdrawn": "upstream up's task task-withdrawn ended cancelled: withdrawn by its owner",
	} {
		_, link, cs := connect(t)
		var p progress
		res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: name}, p.caller(true))
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || textOf(res) != want {
			t.Errorf("%s: %q (isError %v), want the error %q", name, textOf(res), res.IsError, want)
		}
	}
}

// errDeadline stands for the call's timeout, which cancels its context
// with a cause of its own (package upstream).
var errDeadline = errors.New("upstream call timed out")

func TestCancelledCallCancelsTheTask(t *testing.T) {
	for _, cause := range []error{context.Canceled, errDeadline} {
		cancelledWith(t, cause)
	}
}

func cancelledWith(t *testing.T, cause error) {
	s, link, cs := connect(t)
	ctx, cancel := context.WithCancelCause(t.Context())
	gone := make(chan struct{})
	var p progress
	c := p.caller(true)
	var once sync.Once
	c.Progress = func(*mcp.ProgressNotificationParams) { once.Do(func() { close(gone) }) } // the task is under way
	go func() {
		<-gone
		cancel(cause)
	}()
	_, err := link.CallTool(ctx, cs, &mcp.CallToolParams{Name: "hangs"}, c)
	if err != cause {
		t.Fatalf("err %v, want the call's end: %v", err, cause)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cancelled) != 1 || s.cancelled[0] != "task-hangs" || s.tasks["task-hangs"].now.status != "cancelled" {
		t.Errorf("cancelled at the upstream: %v", s.cancelled)
	}
}

func TestInputTheCallerCannotGive(t *testing.T) {
	s, link, cs := connect(t)
	var p progress
	res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: "asks"}, p.caller(false))
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "upstream up's task task-asks needs input (Which one?) that Legate cannot relay") {
		t.Fatalf("got %q (isError %v), %v; want a tool error that says the task needs input", textOf(res), res != nil && res.IsError, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cancelled) != 1 || s.cancelled[0] != "task-asks" {
		t.Errorf("the task left waiting for input: cancelled %v", s.cancelled)
	}
}

func TestPlainToolGoesThroughTheSDK(t *testing.T) {
	s, link, cs := connect(t)
	var p progress
	res, err := link.CallTool(t.Context(), cs, &mcp.CallToolParams{Name: "plain"}, p.caller(true))
	if err != nil || textOf(res) != "plain answer" {
		t.Fatalf("got %q, %v", textOf(res), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taskAsked["plain"] {
		t.Error("a tool that is not task-required was asked for a task")
	}
}
