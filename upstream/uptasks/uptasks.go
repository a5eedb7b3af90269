// Package uptasks runs an upstream's task-only tools for any client.
//
// An upstream of protocol 2025-11-25 may mark a tool task-required
// (execution.taskSupport "required"): it runs a tools/call only when the
// request asks for a task (params.task), answers it with the task
// ({"task": {"taskId", "status", ...}}), and gives the tool's result later
// through tasks/result. Legate runs such a call itself, on the upstream
// session the call path chose: it creates the task, follows it (tasks/get
// every pollInterval, sooner on notifications/tasks/status), relays each
// new status message as progress, cancels it (tasks/cancel) when the call
// ends first (the client cancelled it, or its timeout passed), and answers
// with the task's result as an ordinary tools/call result. So its client
// calls the tool as any other, whatever it supports.
//
// The go-sdk client sends none of the task methods, and decodes a tool's
// result into types that drop the task. A Link sends them itself: on a
// Streamable HTTP session, through a relay connection (package relay: the
// one a shared session relays calls on, or for a per_client session one
// of its own), whose answers and the upstream's requests on their streams
// it already handles; on a stdio or legacy SSE session, on the transport's
// connection (Link.Wrap), whose messages it reads first: the answers to
// its own requests and the task status notifications. It learns which
// tools are task-required from the tools/list results the go-sdk client
// receives: read from that connection, or from the HTTP responses
// (Tools.Watch).
package uptasks

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/upstream/relay"
)

// stateless is the first protocol whose tasks are another extension
// (SEP-2663): a session of it or later calls as before.
const stateless = "2026-07-28"

// Tools is what one upstream's listings said of its tools: the names of
// those it runs only as tasks. Every session of the upstream shares it.
type Tools struct {
	id       string   // the upstream's, which errors name
	required sync.Map // tool name → struct{}
	// listed is set once a listing was read; asked, once a call listed
	// the upstream itself for want of one (CallTool).
	listed, asked atomic.Bool
}

// NewTools returns the task-required tools of upstream id, none until a
// listing is read.
func NewTools(id string) *Tools { return &Tools{id: id} }

// Required reports whether the last listing read marked tool name
// task-required.
func (t *Tools) Required(name string) bool {
	if t == nil {
		return false
	}
	_, ok := t.required.Load(name)
	return ok
}

// read reads one page of a tools/list result.
func (t *Tools) read(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	t.listed.Store(true)
	for _, tool := range page.Tools {
		// "optional" runs without a task when asked without one: only
		// "required" needs Legate to create it.
		if tool.Execution != nil && tool.Execution.TaskSupport == "required" {
			t.required.Store(tool.Name, struct{}{})
		} else {
			t.required.Delete(tool.Name)
		}
	}
}

// Link carries the task requests of one upstream session. A nil Link has
// none: its calls go through the SDK client.
type Link struct {
	tools *Tools
	conn  atomic.Pointer[conn]       // a stdio or legacy SSE session's (Wrap)
	http  atomic.Pointer[relay.Conn] // a Streamable HTTP session's (Over)
}

// requester sends one request of the link on its session and returns the
// result's JSON, or the upstream's JSON-RPC error.
type requester interface {
	call(ctx context.Context, id, method string, params any) (json.RawMessage, error)
}

// NewLink returns the link of a session of the upstream whose tools are
// tools.
func NewLink(tools *Tools) *Link { return &Link{tools: tools} }

// Wrap returns tr with the link on the connection it makes; a Streamable
// HTTP transport is returned as it is: the go-sdk client tells its own
// connection type of the session's progress (an unexported method), which
// a wrapper would hide. Its requests go through Over's connection.
func (l *Link) Wrap(tr mcp.Transport) mcp.Transport {
	if _, ok := tr.(*mcp.StreamableClientTransport); ok || l == nil {
		return tr
	}
	return &transport{Transport: tr, l: l}
}

// Over sends the link's requests on c, a Streamable HTTP session's relay
// connection, and returns c.
func (l *Link) Over(c *relay.Conn) *relay.Conn {
	if l != nil {
		l.http.Store(c)
	}
	return c
}

// Required reports whether a call to tool name is run as a task (by
// CallTool, never relayed as bytes).
func (l *Link) Required(name string) bool { return l != nil && l.tools.Required(name) }

// Caller is what a call run as a task relays to its caller.
type Caller struct {
	// Token is the call's own progress token, unique on the session:
	// Progress is given each new status under it, and the link's request
	// ids start with it; tasks/result's is the token itself, which is how
	// the relay finds the call whose client answers the upstream's input
	// requests (relay.Peer).
	Token    string
	Progress func(*mcp.ProgressNotificationParams)
	// CanAsk is set when the caller answers the upstream's own requests
	// (elicitation, sampling) during the call; without it, a task that
	// asks for input (input_required) is cancelled and the call answers a
	// tool error that says so.
	CanAsk bool
}

// CallTool calls a tool on session cs: as a task the link runs when the
// tool is task-required and the session's protocol has such tasks,
// through the SDK client otherwise.
func (l *Link) CallTool(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams, caller Caller) (*mcp.CallToolResult, error) {
	var r requester
	if l != nil {
		if c := l.http.Load(); c != nil {
			r = overHTTP{c}
		} else if c := l.conn.Load(); c != nil {
			r = c
		}
	}
	if r == nil || cs.InitializeResult().ProtocolVersion >= stateless {
		return cs.CallTool(ctx, params)
	}
	if !l.tools.listed.Load() && l.tools.asked.CompareAndSwap(false, true) {
		// A call before this process listed the upstream (its start's
		// listing under way, or a process that lists nothing): it lists it
		// once, on this session, which reads the answer.
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				break
			}
		}
	}
	if !l.tools.Required(params.Name) {
		return cs.CallTool(ctx, params)
	}
	return run(ctx, r, l.tools.id, params, caller)
}
