package uptasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// task is the task of the 2025-11-25 protocol, as tools/call (under
// "task") and tasks/get answer it.
type task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	PollInterval  *int64 `json:"pollInterval"` // milliseconds
}

func (t task) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// every is how long to wait before asking for the task again: its
// pollInterval, 1s if it gives none, never under 10ms.
func (t task) every() time.Duration {
	if t.PollInterval == nil {
		return time.Second
	}
	return max(time.Duration(*t.PollInterval)*time.Millisecond, 10*time.Millisecond)
}

// run calls the tool with params as a task of upstream on r, follows the
// task and returns its result.
func run(ctx context.Context, r requester, upstream string, params *mcp.CallToolParams, caller Caller) (*mcp.CallToolResult, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	// The server keeps the task as long as it sees fit (no ttl asked).
	body = append(body[:len(body)-1], `,"task":{}}`...)
	raw, err := r.call(ctx, caller.Token+"-task", "tools/call", json.RawMessage(body))
	if err != nil {
		return nil, err
	}
	var created struct {
		Task *task `json:"task"`
	}
	if json.Unmarshal(raw, &created) != nil || created.Task == nil || created.Task.TaskID == "" {
		return decode(raw) // answered without a task
	}
	f := follower{r: r, upstream: upstream, caller: caller, t: *created.Task}
	return f.follow(ctx)
}

// outcome is the answer to tasks/result.
type outcome struct {
	raw json.RawMessage
	err error
}

// follower follows one task t of upstream on r for caller.
type follower struct {
	r        requester
	upstream string
	caller   Caller
	t        task
	gets     int
	status   status
}

// follow waits for the task to end, relaying its status, and returns its
// result; a call that ends first cancels it.
func (f *follower) follow(ctx context.Context) (*mcp.CallToolResult, error) {
	var wake <-chan struct{}
	if c, ok := f.r.(*conn); ok {
		w, stop := c.watchTask(f.t.TaskID)
		defer stop()
		wake = w
	}
	f.status.caller = f.caller
	f.status.relay(f.t)
	// tasks/result waits for the end and carries the upstream's input
	// requests meanwhile, which a caller that can answer them is asked
	// (through the SDK client's handlers, or the relay's Peer): it is sent
	// at once. For any other caller it is sent once the task has ended.
	var result chan outcome
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	fetch := func() {
		result = make(chan outcome, 1)
		go func() {
			raw, err := f.r.call(rctx, f.caller.Token, "tasks/result", map[string]string{"taskId": f.t.TaskID})
			result <- outcome{raw, err}
		}()
	}
	if f.caller.CanAsk {
		fetch()
	}
	timer := time.NewTimer(f.t.every())
	defer timer.Stop()
	for {
		switch t := f.t; {
		case t.Status == "failed" || t.Status == "cancelled":
			return ended(f.upstream, t), nil
		case t.Status == "completed" && result == nil:
			fetch()
		case t.Status == "input_required" && !f.caller.CanAsk:
			// A tool error, not the upstream's failure (its breaker).
			f.cancel(ctx)
			return toolError(fmt.Sprintf("upstream %s's task %s needs input (%s) that Legate cannot relay to this caller; the task is cancelled", f.upstream, t.TaskID, t.StatusMessage)), nil
		}
		select {
		case o := <-result:
			if o.err == nil {
				return decode(o.raw)
			}
			// A task that failed may have no result to give.
			if now, err := f.get(ctx); err == nil && now.terminal() && now.Status != "completed" {
				return ended(f.upstream, now), nil
			}
			return nil, o.err
		case <-ctx.Done():
			f.cancel(ctx)
			return nil, context.Cause(ctx)
		case <-timer.C:
		case <-wake:
		}
		now, err := f.get(ctx)
		if err != nil {
			if ctx.Err() != nil {
				continue // cancelled above
			}
			return nil, err
		}
		f.t = now
		f.status.relay(now)
		timer.Reset(now.every())
	}
}

// get asks for the task's state.
func (f *follower) get(ctx context.Context) (task, error) {
	f.gets++
	var t task
	raw, err := f.r.call(ctx, f.caller.Token+"-get-"+strconv.Itoa(f.gets), "tasks/get", map[string]string{"taskId": f.t.TaskID})
	if err == nil {
		err = json.Unmarshal(raw, &t)
	}
	return t, err
}

// cancel cancels the task at the upstream, for a call that ended first
// (ctx may be done): within a few seconds, and a terminal task's refusal
// is no matter.
func (f *follower) cancel(ctx context.Context) {
	cctx, done := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer done()
	f.r.call(cctx, f.caller.Token+"-cancel", "tasks/cancel", map[string]string{"taskId": f.t.TaskID})
}

// status relays a task's statuses to its caller as progress, each new
// one once.
type status struct {
	caller Caller
	last   string
	n      float64
}

func (s *status) relay(t task) {
	msg := t.StatusMessage
	if msg == "" {
		msg = t.Status
	}
	if msg == s.last || s.caller.Progress == nil {
		return
	}
	s.last, s.n = msg, s.n+1
	s.caller.Progress(&mcp.ProgressNotificationParams{ProgressToken: s.caller.Token, Message: msg, Progress: s.n})
}

// ended is the tool error of a task that failed or was cancelled at the
// upstream.
func ended(upstream string, t task) *mcp.CallToolResult {
	text := fmt.Sprintf("upstream %s's task %s ended %s", upstream, t.TaskID, t.Status)
	if t.StatusMessage != "" {
		text += ": " + t.StatusMessage
	}
	return toolError(text)
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// relatedTask is the _meta key with which tasks/result names its task,
// which the caller, whose call was no task, never saw.
const relatedTask = "io.modelcontextprotocol/related-task"

// decode reads a tools/call result.
func decode(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decoding the task's result: %w", err)
	}
	delete(res.Meta, relatedTask)
	if len(res.Meta) == 0 {
		res.Meta = nil
	}
	return &res, nil
}
