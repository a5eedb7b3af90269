package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// taskUpstream is a Streamable HTTP upstream (Raw) whose tool "research"
// runs only as a task (execution.taskSupport "required"): working through
// a status message a tasks/get, then completed, unless it is "hang", which
// works until cancelled. tasks/result waits for the end.
type taskUpstream struct {
	mu        sync.Mutex
	steps     map[string][]string // task id → the statuses its next tasks/gets give
	now       map[string]string   // task id → its status
	ended     chan struct{}       // closed at the first task's end
	cancelled []string
	methods   []string
}

func newTaskUpstream(t *testing.T) (*taskUpstream, string) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`)
	u := &taskUpstream{steps: map[string][]string{}, now: map[string]string{}, ended: make(chan struct{})}
	raw.Handle(u.handle)
	return u, srv.URL()
}

func (u *taskUpstream) handle(ctx context.Context, method string, params json.RawMessage) (any, error, bool) {
	var p struct {
		Arguments struct {
			Text string `json:"text"`
		} `json:"arguments"`
		Task   json.RawMessage `json:"task"`
		TaskID string          `json:"taskId"`
	}
	json.Unmarshal(params, &p)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.methods = append(u.methods, method)
	task := func(id string) map[string]any {
		status, msg, _ := strings.Cut(u.now[id], ": ")
		return map[string]any{"taskId": id, "status": status, "statusMessage": msg, "ttl": nil, "pollInterval": 10,
			"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z"}
	}
	switch method {
	case "tools/call":
		if p.Task == nil {
			return nil, fmt.Errorf("requires task augmentation"), true
		}
		id := fmt.Sprintf("t%d", len(u.now)+1)
		u.now[id] = "working: Starting"
		if p.Arguments.Text != "hang" {
			u.steps[id] = []string{"working: Reading " + p.Arguments.Text, "completed: "}
		}
		return map[string]any{"task": task(id)}, nil, true
	case "tasks/get":
		if s := u.steps[p.TaskID]; len(s) > 0 {
			u.now[p.TaskID], u.steps[p.TaskID] = s[0], s[1:]
			if strings.HasPrefix(s[0], "completed") {
				close(u.ended)
			}
		}
		return task(p.TaskID), nil, true
	case "tasks/result":
		u.mu.Unlock()
		select {
		case <-u.ended:
		case <-ctx.Done():
		}
		u.mu.Lock()
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "report"}}}, nil, true
	case "tasks/cancel":
		u.cancelled = append(u.cancelled, p.TaskID)
		u.now[p.TaskID] = "cancelled: "
		return task(p.TaskID), nil, true
	}
	return nil, nil, false
}

// A tool a Streamable HTTP upstream runs only as a task answers its
// caller as any other, both ways a call goes (the SDK's and the relay's):
// its status as progress under the caller's token, its result as the
// call's.
func TestTaskOnlyToolOverHTTP(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		noLeaks(t)
		up, url := newTaskUpstream(t)
		m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "tk", URL: url})
		m.Start(upstreamtest.Context(t))
		tl := waitTool(t, m, "tk", "research", 10*time.Second)
		var mu sync.Mutex
		var progress []string
		res, err := callAs(m, tl, "tides", upstream.Client{ProgressToken: "mine", Progress: func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			defer mu.Unlock()
			if p.ProgressToken != "mine" {
				t.Errorf("progress under %v, want the caller's token", p.ProgressToken)
			}
			progress = append(progress, p.Message)
		}})
		if err != nil || upstreamtest.Text(res) != "report" {
			t.Fatalf("got %v, %v", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"Starting", "Reading tides", "completed"}; !slices.Equal(progress, want) {
			t.Errorf("progress %q, want %q", progress, want)
		}
		up.mu.Lock()
		defer up.mu.Unlock()
		if len(up.cancelled) != 0 || !slices.Contains(up.methods, "tasks/result") {
			t.Errorf("methods %v, cancelled %v", up.methods, up.cancelled)
		}
	})
}

// A call whose timeout passes cancels its task at the upstream, and fails
// TIMEOUT as any call does.
func TestTaskOnlyToolTimeoutCancelsTheTask(t *testing.T) {
	noLeaks(t)
	up, url := newTaskUpstream(t)
	m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "tk", URL: url, Timeout: dur(300 * time.Millisecond)})
	m.Start(upstreamtest.Context(t))
	tl := waitTool(t, m, "tk", "research", 10*time.Second)
	_, err := call(m, tl, "hang")
	if upstreamCode(err) != legate.CodeTimeout {
		t.Fatalf("err %v, want TIMEOUT", err)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if !slices.Equal(up.cancelled, []string{"t1"}) {
		t.Errorf("cancelled %v, want the call's task", up.cancelled)
	}
}
