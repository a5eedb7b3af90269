package uptasks

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport makes connections the link reads first.
type transport struct {
	mcp.Transport
	l *Link
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &conn{Connection: inner, tools: t.l.tools, done: make(chan struct{}),
		pending: map[string]chan *jsonrpc.Response{}, lists: map[jsonrpc.ID]struct{}{}, watch: map[string]chan struct{}{}, early: map[string]struct{}{}}
	t.l.conn.Store(c)
	return c, nil
}

// errEnded fails a request whose session ended before its answer.
var errEnded = errors.New("the upstream session ended")

// conn is a session's connection, with the link's requests beside the SDK
// client's.
type conn struct {
	mcp.Connection
	tools *Tools
	done  chan struct{} // closed when the connection ends
	once  sync.Once

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response // the link's requests, by id
	lists   map[jsonrpc.ID]struct{}           // the SDK client's tools/list requests
	watch   map[string]chan struct{}          // task id → woken by its status notifications
	early   map[string]struct{}               // tasks whose notification came before their watch
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.Method == "tools/list" && r.IsCall() {
		c.mu.Lock()
		c.lists[r.ID] = struct{}{}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// Read gives the SDK client every message but the answers to the link's
// requests and the task status notifications.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.end()
			return nil, err
		}
		if !c.take(msg) {
			return msg, nil
		}
	}
}

func (c *conn) Close() error {
	c.end()
	return c.Connection.Close()
}

func (c *conn) end() { c.once.Do(func() { close(c.done) }) }

// take reads msg first, and reports whether it was the link's.
func (c *conn) take(msg jsonrpc.Message) bool {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.mu.Lock()
		if id, ok := m.ID.Raw().(string); ok {
			if ch, ok := c.pending[id]; ok {
				delete(c.pending, id)
				c.mu.Unlock()
				ch <- m
				return true
			}
		}
		_, listing := c.lists[m.ID]
		delete(c.lists, m.ID)
		c.mu.Unlock()
		if listing && m.Error == nil {
			c.tools.read(m.Result)
		}
	case *jsonrpc.Request:
		if m.Method != "notifications/tasks/status" || m.ID.IsValid() {
			return false
		}
		var p struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			c.mu.Lock()
			c.wake(p.TaskID)
			c.mu.Unlock()
		}
		return true
	}
	return false
}

// watchTask returns what wakes the call following task id, and stops it.
func (c *conn) watchTask(id string) (<-chan struct{}, func()) {
	wake := make(chan struct{}, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch[id] = wake
	if _, ok := c.early[id]; ok {
		delete(c.early, id)
		wake <- struct{}{}
	}
	return wake, func() {
		c.mu.Lock()
		delete(c.watch, id)
		c.mu.Unlock()
	}
}

// wake wakes the call following task id, or, when none does yet (the
// task was just created), the one that will. c.mu is held.
func (c *conn) wake(id string) {
	ch, ok := c.watch[id]
	if !ok {
		if len(c.early) >= 64 {
			clear(c.early) // tasks no call followed
		}
		c.early[id] = struct{}{}
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// call sends a request of the link and waits for its answer; a request
// its ctx gives up is cancelled at the upstream (notifications/cancelled).
func (c *conn) call(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: raw}); err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-ctx.Done():
		note, _ := json.Marshal(map[string]string{"requestId": id, "reason": context.Cause(ctx).Error()})
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		c.Connection.Write(nctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: note})
		return nil, context.Cause(ctx)
	case <-c.done:
		return nil, errEnded
	}
}
