package tasks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// An upstream's own task, handed through: a stateless upstream that offers
// the extension answers a call Legate relays for a client of the extension
// (upstream.Client.Tasks) with a task of its own. The client gets it under
// an id of Legate's (Hand), signed for the client's principal and tenant as
// Legate's own task ids are, and naming the upstream, the tool and the
// upstream's task id; the client's tasks/get, tasks/cancel and tasks/update
// about it are sent on to that upstream (Options.Upstreams) with the
// upstream's id, and its answers come back with Legate's. A completed task's result
// is presented as the call's own would be (Options.Present), and its end
// audited (Options.Record).

// handedPrefix starts the id of an upstream's task handed through.
const handedPrefix = "lgu1."

// Handed is an upstream's task as Legate hands it through.
type Handed struct {
	Upstream string // the upstream's id
	Tool     string // the canonical name of the tool whose call made it
	TaskID   string // the upstream's own task id
}

// handedID is the id under which h is handed to c.
func (t *Tasks) handedID(ctx context.Context, h Handed, c Caller) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(h.Upstream + "\x00" + h.Tool + "\x00" + h.TaskID))
	return handedPrefix + payload + "." + t.sign(ctx, "u."+payload, c)
}

// openHanded returns the upstream task id names for c.
func (t *Tasks) openHanded(ctx context.Context, id string, c Caller) (Handed, error) {
	payload, sig, ok := strings.Cut(strings.TrimPrefix(id, handedPrefix), ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(t.sign(ctx, "u."+payload, c))) {
		return Handed{}, ErrUnknown
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	parts := strings.SplitN(string(b), "\x00", 3) // the upstream's own id may hold anything
	if err != nil || len(parts) != 3 {
		return Handed{}, ErrUnknown
	}
	return Handed{Upstream: parts[0], Tool: parts[1], TaskID: parts[2]}, nil
}

// Hand returns res, the result of a call of upstream's tool for c, as the
// client gets it: unchanged, unless it is a task the upstream created
// (resultType task), which the client gets under Legate's id for it, named
// in its text in place of the upstream's.
func (t *Tasks) Hand(ctx context.Context, up, tool string, c Caller, res json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	var kind, inner string
	if json.Unmarshal(res, &m) != nil || json.Unmarshal(m["resultType"], &kind) != nil || kind != "task" {
		return res, nil
	}
	if json.Unmarshal(m["taskId"], &inner) != nil || inner == "" {
		return nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: fmt.Sprintf("upstream %s answered %s with a task without an id", up, tool)}
	}
	return t.handOut(ctx, m, Handed{Upstream: up, Tool: tool, TaskID: inner}, c), nil
}

// handOut encodes an upstream's task m (a CreateTaskResult or a task of
// tasks/get) under Legate's id for h.
func (t *Tasks) handOut(ctx context.Context, m map[string]json.RawMessage, h Handed, c Caller) json.RawMessage {
	id := t.handedID(ctx, h, c)
	m["taskId"], _ = json.Marshal(id)
	if content, ok := m["content"]; ok && named(h.TaskID) && bytes.Contains(content, []byte(h.TaskID)) {
		// The text that says which task to follow (as Legate's own
		// tasks' does) names the id the client knows.
		var items []map[string]json.RawMessage
		if json.Unmarshal(content, &items) == nil {
			for _, item := range items {
				var text string
				if json.Unmarshal(item["text"], &text) == nil {
					item["text"], _ = json.Marshal(strings.ReplaceAll(text, h.TaskID, id))
				}
			}
			m["content"], _ = json.Marshal(items)
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// named reports whether an upstream's task id is long enough to be told
// apart from other words where a text names it: shorter ones are left
// alone there.
func named(upstreamID string) bool { return len(upstreamID) >= 8 }

// Upstreams are the upstreams whose tasks are handed through
// (*upstream.Manager).
type Upstreams interface {
	Request(ctx context.Context, id string, client upstream.Client, method, name string, params json.RawMessage) (json.RawMessage, bool, error)
}

// handedRequest sends task method method about the handed task id for c
// to its upstream, and returns the upstream's answer under Legate's id.
// params are the client's; meta their _meta.
func (t *Tasks) handedRequest(ctx context.Context, method, id string, c Caller, params, meta json.RawMessage) (json.RawMessage, error) {
	h, err := t.openHanded(ctx, id, c)
	if err != nil || t.o.Upstreams == nil {
		return nil, ErrUnknown
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
	}
	delete(p, "_meta")
	p["taskId"], _ = json.Marshal(h.TaskID)
	out, _ := json.Marshal(p)
	client := upstream.Client{Principal: c.Principal, Tenant: c.Tenant, Round: &rounds.Round{Meta: meta}, Tasks: true}
	res, sent, err := t.o.Upstreams.Request(ctx, h.Upstream, client, method, h.TaskID, out)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		// The upstream's answer (an unknown task, a task it no longer
		// keeps): the client's, naming the task as the client does.
		msg := rpcErr.Message
		if named(h.TaskID) {
			msg = strings.ReplaceAll(msg, h.TaskID, id)
		}
		return nil, &jsonrpc.Error{Code: rpcErr.Code, Message: msg, Data: rpcErr.Data}
	case err != nil:
		return nil, fmt.Errorf("upstream %s: %w", h.Upstream, err)
	case !sent:
		return nil, fmt.Errorf("upstream %s is gone, or no longer serves requests without sessions, as its tasks need", h.Upstream)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil {
		return nil, fmt.Errorf("upstream %s answered %s with no result object", h.Upstream, method)
	}
	if _, ok := m["taskId"]; !ok {
		return res, nil // an ack (tasks/cancel, tasks/update)
	}
	var status string
	json.Unmarshal(m["status"], &status)
	if status == Completed || status == Failed || status == Cancelled {
		t.ended(h, c, status, m)
	}
	return t.handOut(ctx, m, h, c), nil
}

// ended presents the result of handed-through task h, which its upstream
// reports ended with status (m, the task), and records its end the first
// time this process sees it (an audit row beside the call's: decision
// DecisionEnd).
func (t *Tasks) ended(h Handed, c Caller, status string, m map[string]json.RawMessage) {
	result := m["result"]
	if len(result) > 0 {
		if t.o.Present != nil {
			result = t.o.Present(h.Upstream, h.Tool, result)
		}
		if t.o.Result != nil {
			result = t.o.Result(result)
		}
		m["result"] = result
	}
	if t.o.Record == nil || !t.firstEnd(h) {
		return
	}
	outcome := "ok"
	var r struct {
		IsError bool `json:"isError"`
	}
	switch {
	case status == Cancelled:
		outcome = "CANCELLED"
	case status == Failed || json.Unmarshal(result, &r) == nil && r.IsError:
		outcome = "TOOL_ERROR"
	}
	t.o.Record(store.AuditRow{Time: t.o.Now(), Principal: c.Principal, Tenant: c.Tenant, Tool: h.Tool, Source: "upstream:" + h.Upstream,
		Decision: DecisionEnd, Outcome: outcome, ResultSize: len(result), Detail: fmt.Sprintf("upstream %s's task %s ended %s", h.Upstream, h.TaskID, status)})
}

// DecisionEnd is the decision of the audit row that records the end of an
// upstream's task handed through; the call that made the task has its
// own row, with the policy's decision.
const DecisionEnd = "task_end"
