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

// drain waits until every request handed over or bypassed is answered,
// the connection is closed, or ctx ends; a bypassed request handed back
// to the SDK meanwhile is returned, for the session to serve.
func (c *lineConn) drain(ctx context.Context) (jsonrpc.Message, error) {
	for {
		c.openMu.Lock()
		n := len(c.open) + c.bypassed
		c.openMu.Unlock()
		if n == 0 {
			return nil, nil
		}
		select {
		case msg := <-c.in:
			return msg, nil
		case <-c.settled:
		case <-c.closed:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
