package jsonlines

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A line may hold a JSON-RPC batch, an array of messages, which protocol
// 2025-03-26 requires a server to receive (later versions dropped it).
// Each message of it is screened like a line of its own and the valid ones
// are served one by one; the answers — the session's responses to its
// requests and the error replies to its malformed members — go back as one
// array once every request is answered.

// batch is one batch being answered.
type batch struct {
	pending map[jsonrpc.ID]int // a request's id → its answer's place in out
	out     []json.RawMessage
}

// splitBatch returns the members of the batch line holds, if it is one.
func splitBatch(line []byte, tooLong bool) ([]json.RawMessage, bool) {
	if tooLong || !bytes.HasPrefix(bytes.TrimLeft(line, " \t\r"), []byte("[")) {
		return nil, false
	}
	var elems []json.RawMessage
	if json.Unmarshal(line, &elems) != nil {
		return nil, false // not JSON: screenLine answers it
	}
	return elems, true
}

// serveBatch serves the members of a batch.
func (c *lineConn) serveBatch(elems []json.RawMessage) error {
	if len(elems) == 0 {
		return c.writeLine(invalid(nil, "an empty batch").encode())
	}
	b := &batch{pending: map[jsonrpc.ID]int{}}
	var msgs []jsonrpc.Message
	c.batchMu.Lock()
	for _, e := range elems {
		msg, reply := screenLine(e, false, c.t.Max)
		req, isReq := msg.(*jsonrpc.Request)
		switch {
		case reply != nil && reply.silent:
			c.t.Log.Info("stdio: dropped a malformed response", "reason", reply.Error.Message)
		case reply != nil:
			b.out = append(b.out, reply.encode())
		case isReq && req.IsCall() && c.batchAnswering(req.ID, b):
			id, _ := json.Marshal(req.ID.Raw())
			b.out = append(b.out, invalid(id, "another request of a batch under way has this id").encode())
		case isReq && req.IsCall():
			b.pending[req.ID] = len(b.out)
			b.out = append(b.out, nil)
			c.batches[req.ID] = b
			msgs = append(msgs, msg)
		default:
			msgs = append(msgs, msg)
		}
	}
	c.batchMu.Unlock()
	if len(b.pending) == 0 && len(b.out) > 0 {
		if err := c.writeLine(b.array()); err != nil {
			return err
		}
	}
	for _, msg := range msgs {
		if err := c.pass(msg); err != nil {
			return err
		}
	}
	return nil
}

// batchAnswering reports, with batchMu held, whether a request with id is
// already waiting in b or another batch.
func (c *lineConn) batchAnswering(id jsonrpc.ID, b *batch) bool {
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	_, inThis := b.pending[id]
	_, inOther := c.batches[id]
	return inThis || inOther
}

// answerBatch takes the encoded response to the request id if it belongs
// to a batch; once the batch is complete, all is its array of answers.
func (c *lineConn) answerBatch(id jsonrpc.ID, resp []byte) (all []byte, inBatch bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[id]
	if !ok {
		return nil, false
	}
	b.out[b.pending[id]] = resp
	delete(b.pending, id)
	delete(c.batches, id)
	if len(b.pending) > 0 {
		return nil, true
	}
	return b.array(), true
}

// array is the batch's answers as one JSON array.
func (b *batch) array() []byte {
	all, _ := json.Marshal(b.out) // each member is valid JSON
	return all
}
