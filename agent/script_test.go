package agent_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is one scripted answer of the model server: text and tool calls,
// streamed; or a fault.
type step struct {
	text  string
	calls []scriptedCall
	// status, when set, answers with this HTTP status and an error body,
	// with Retry-After when retryAfter is set.
	status     int
	retryAfter string
	// stall waits this long (or until the client gives up) before
	// answering.
	stall time.Duration
	// drop sends the start of the answer, then breaks the connection.
	drop bool
}

type scriptedCall struct{ name, args string }

func callTool(name, args string) scriptedCall { return scriptedCall{name, args} }

// modelServer is a local model API speaking OpenAI chat completions
// (POST .../chat/completions) and Anthropic messages (POST .../messages),
// streaming, answering each request with the next step of its script. It
// keeps every request body.
type modelServer struct {
	t   *testing.T
	url string

	mu       sync.Mutex
	script   []step
	requests []map[string]any
}

func newModelServer(t *testing.T, script ...step) *modelServer {
	m := &modelServer{t: t, script: script}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.url = srv.URL + "/v1"
	return m
}

// requestsMade is a copy of the requests so far.
func (m *modelServer) requestsMade() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.requests...)
}

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	if len(m.script) == 0 {
		m.mu.Unlock()
		m.t.Errorf("model server: request %d beyond the script", len(m.requests))
		http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusBadRequest)
		return
	}
	s := m.script[0]
	m.script = m.script[1:]
	m.mu.Unlock()
	if req["stream"] != true {
		m.t.Errorf("model server: a request not streamed: %s", body)
	}
	if s.stall > 0 {
		select {
		case <-time.After(s.stall):
		case <-r.Context().Done():
			return
		}
	}
	if s.status != 0 {
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"scripted","message":"scripted status %d"}}`, s.status)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if strings.HasSuffix(r.URL.Path, "/messages") {
		anthropicStream(w, s)
	} else {
		openAIStream(w, s)
	}
}

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	flush(w)
}

// breakOff ends the connection mid-answer.
func breakOff() { panic(http.ErrAbortHandler) }

func openAIStream(w http.ResponseWriter, s step) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if s.text != "" {
		half := len(s.text) / 2
		sse(w, "", chunk(map[string]any{"content": s.text[:half]}, nil))
		if s.drop {
			breakOff()
		}
		sse(w, "", chunk(map[string]any{"content": s.text[half:]}, nil))
	}
	for i, c := range s.calls {
		sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil))
		half := len(c.args) / 2
		for _, part := range []string{c.args[:half], c.args[half:]} {
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	if s.drop {
		breakOff()
	}
	finish := "stop"
	if len(s.calls) > 0 {
		finish = "tool_calls"
	}
	sse(w, "", chunk(map[string]any{}, finish))
	sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush(w)
}

func anthropicStream(w http.ResponseWriter, s step) {
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"content": []any{}, "model": "scripted", "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}})
	i := 0
	if s.text != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		half := len(s.text) / 2
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s.text[:half]}})
		if s.drop {
			breakOff()
		}
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s.text[half:]}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for n, c := range s.calls {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": c.name, "input": map[string]any{}}})
		half := len(c.args) / 2
		for _, part := range []string{c.args[:half], c.args[half:]} {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	if s.drop {
		breakOff()
	}
	stop := "end_turn"
	if len(s.calls) > 0 {
		stop = "tool_use"
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
