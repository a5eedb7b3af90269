package upstreamtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// Raw is a hand-written MCP server over Streamable HTTP (JSON responses,
// no session, no SSE stream). It lists its tools exactly as given, so a
// test can serve definitions the go-sdk would refuse to register (an
// inputSchema that is not an object schema), and change them without
// notifying anyone.
type Raw struct {
	mu    sync.Mutex
	tools []json.RawMessage
	// call answers tools/call; nil answers {"content":[{"type":"text","text":"<name>"}]}.
	call func(name string, args json.RawMessage) (json.RawMessage, error)
	// first answers any request before the methods above (Handle).
	first func(ctx context.Context, method string, params json.RawMessage) (any, error, bool)

	// Lists counts tools/list requests; Calls counts tools/call requests.
	Lists, Calls atomic.Int64
}

// NewRaw serves a Raw server on 127.0.0.1 listing tools (each a JSON tool
// definition).
func NewRaw(t testing.TB, tools ...string) (*Raw, *Server) {
	t.Helper()
	r := &Raw{}
	r.SetTools(tools...)
	return r, NewServer(t, r)
}

// SetTools replaces the listed tools. Each must be valid JSON.
func (r *Raw) SetTools(tools ...string) {
	defs := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		if !json.Valid([]byte(t)) {
			panic(fmt.Sprintf("upstreamtest: tool %d is not JSON: %s", i, t))
		}
		defs[i] = json.RawMessage(t)
	}
	r.mu.Lock()
	r.tools = defs
	r.mu.Unlock()
}

// HandleCall sets how tools/call is answered: fn returns the result
// object, or an error answered as a JSON-RPC error.
func (r *Raw) HandleCall(fn func(name string, args json.RawMessage) (json.RawMessage, error)) {
	r.mu.Lock()
	r.call = fn
	r.mu.Unlock()
}

// Handle sets fn to answer every request first, within the context of its
// HTTP request: a result, or an error answered as a JSON-RPC error; with ok
// false, the request is answered as without it.
func (r *Raw) Handle(fn func(ctx context.Context, method string, params json.RawMessage) (result any, err error, ok bool)) {
	r.mu.Lock()
	r.first = fn
	r.mu.Unlock()
}

func (r *Raw) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	default:
		// No standalone SSE stream.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	if len(msg.ID) == 0 {
		// A notification (or a response): accepted.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	var rpcErr error
	r.mu.Lock()
	first := r.first
	r.mu.Unlock()
	handled := false
	if first != nil {
		result, rpcErr, handled = first(req.Context(), msg.Method, msg.Params)
	}
	if !handled {
		result, rpcErr = r.answer(msg.Method, msg.Params)
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
	if rpcErr != nil {
		resp["error"] = map[string]any{"code": -32601, "message": rpcErr.Error()}
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// answer answers a request of method with params as the server does
// without Handle.
func (r *Raw) answer(method string, params json.RawMessage) (result any, rpcErr error) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(params, &p)
		result = map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "raw", "version": "1"},
		}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		r.Lists.Add(1)
		r.mu.Lock()
		result = map[string]any{"tools": append([]json.RawMessage{}, r.tools...)}
		r.mu.Unlock()
	case "tools/call":
		r.Calls.Add(1)
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		json.Unmarshal(params, &p)
		r.mu.Lock()
		fn := r.call
		r.mu.Unlock()
		if fn == nil {
			text, _ := json.Marshal(p.Name)
			result = json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`)
		} else {
			result, rpcErr = fn(p.Name, p.Arguments)
		}
	default:
		rpcErr = fmt.Errorf("method %q not found", method)
	}
	return result, rpcErr
}
