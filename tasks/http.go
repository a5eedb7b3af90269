package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
)

// statelessVersion is the first protocol version without sessions, the
// one whose requests may declare the extension.
const statelessVersion = "2026-07-28"

// maxBody is the largest request body Serve reads; a larger one is the
// SDK's to refuse.
const maxBody = 1 << 20

// Serve answers a stateless (2026-07-28) request for a task method, or
// reports false (r untouched, its body still to read) for the next
// handler to answer. Its caller is the principal authentication put in
// r's context, or Options.Principal.
func (t *Tasks) Serve(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Header.Get("Mcp-Protocol-Version") < statelessVersion {
		return false
	}
	header := r.Header.Get("Mcp-Method")
	if header != "" && !strings.HasPrefix(header, "tasks/") {
		return false // the usual case, read no further
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxBody || !bytes.Contains(body, []byte(`"tasks/`)) {
		return false
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return false
	}
	if header == "" && !strings.HasPrefix(msg.Method, "tasks/") {
		return false
	}
	res, rpcErr := t.answer(r, header, msg.Method, msg.Params)
	reply(w, msg.ID, res, rpcErr)
	return true
}

// answer is the result of task method method, or its error.
func (t *Tasks) answer(r *http.Request, header, method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	if header != method {
		return nil, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "header mismatch: Mcp-Method " + header + " names another method than the body's " + method}
	}
	switch method {
	case "tasks/get", "tasks/cancel", "tasks/update":
	default: // tasks/result and tasks/list were removed by SEP-2663
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
	}
	var p struct {
		TaskID    string          `json:"taskId"`
		Meta      json.RawMessage `json:"_meta"`
		Responses json.RawMessage `json:"inputResponses"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
	}
	if !Declared(p.Meta) {
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{Extension: map[string]any{}}}})
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
			Message: method + " needs the " + Extension + " extension declared in the request's client capabilities", Data: data}
	}
	if name, ok := r.Header["Mcp-Name"]; ok && strings.TrimSpace(strings.Join(name, ",")) != p.TaskID {
		return nil, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "header mismatch: Mcp-Name names another task than params.taskId"}
	}
	if p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params.taskId is required"}
	}
	ctx, c := r.Context(), t.caller(r.Context())
	var res json.RawMessage
	var err error
	switch {
	case strings.HasPrefix(p.TaskID, handedPrefix):
		res, err = t.handedRequest(ctx, method, p.TaskID, c, params, p.Meta)
	case method == "tasks/get":
		res, err = t.Get(ctx, p.TaskID, c)
	case method == "tasks/cancel":
		err = t.Cancel(ctx, p.TaskID, c)
	case method == "tasks/update":
		err = t.Update(ctx, p.TaskID, c, p.Responses)
	}
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return nil, rpcErr
	case errors.Is(err, ErrUnknown):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task: " + p.TaskID}
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + ": " + err.Error()}
	case res == nil:
		res = json.RawMessage(`{"resultType":"complete"}`) // SEP-2663's empty ack
	}
	return res, nil
}

// caller is who makes the request of ctx.
func (t *Tasks) caller(ctx context.Context) Caller {
	if p := auth.PrincipalFromContext(ctx); p != nil {
		return Caller{Principal: p.Name, Tenant: p.Tenant}
	}
	return Caller{Principal: t.o.Principal}
}

// reply writes a JSON-RPC response as a JSON body, with the HTTP status
// protocol 2026-07-28 gives its error (SEP-2575, SEP-2243).
func reply(w http.ResponseWriter, id, res json.RawMessage, e *jsonrpc.Error) {
	out := map[string]any{"jsonrpc": "2.0", "id": id}
	status := http.StatusOK
	if e != nil {
		out["error"] = e
		switch e.Code {
		case jsonrpc.CodeMethodNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams, mcp.CodeMissingRequiredClientCapabilities, mcp.CodeHeaderMismatch:
			status = http.StatusBadRequest
		case jsonrpc.CodeInternalError:
			status = http.StatusInternalServerError
		}
	} else {
		out["result"] = res
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
