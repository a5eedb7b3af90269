package jsonlines

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// At the end of its input a client may still wait for answers: a client
// that writes its requests and closes stdin (`printf ... | legate stdio`)
// is owed an answer to each. The SDK cancels the requests in flight as
// soon as Read reports the end, so Read reports it only once every request
// it handed over has been answered (or cancelled by the client); until
// then the session serves them as usual.

// opened notes a request handed to the session, and a cancellation the
// client sent for one.
func (c *lineConn) opened(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.IsCall() {
		c.openMu.Lock()
		if c.open == nil {
			c.open = map[jsonrpc.ID]bool{}
		}
		c.open[req.ID] = true
		c.openMu.Unlock()
		return
	}
	if req.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				c.answered(id) // no answer is owed to a cancelled request
			}
		}
	}
}

// answered notes that the request id has its answer.
func (c *lineConn) answered(id jsonrpc.ID) {
	c.openMu.Lock()
	delete(c.open, id)
	c.openMu.Unlock()
	select {
	case c.settled <- struct{}{}:
	default:
	}
}

// drain waits until every request handed over is answered, the
// connection is closed, or ctx ends.
func (c *lineConn) drain(ctx context.Context) error {
	for {
		c.openMu.Lock()
		n := len(c.open)
		c.openMu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-c.settled:
		case <-c.closed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
