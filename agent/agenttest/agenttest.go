// Package agenttest is a scripted model server for tests of the agent: a
// local HTTP server speaking the OpenAI chat completions and Anthropic
// messages wire formats, streaming (SSE) with tool calls, answering each
// request with the next step of a script, faults included.
package agenttest

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

// Step is one scripted answer of the model server: text and tool calls,
// streamed; or a fault.
type Step struct {
	Text  string
	Calls []ToolCall
	// Status, when set, answers with this HTTP status and an error body,
	// with Retry-After when RetryAfter is set.
	Status     int
	RetryAfter string
	// Stall waits this long (or until the client gives up) before
	// answering.
	Stall time.Duration
	// Drop sends the start of the answer, then breaks the connection.
	Drop bool
}

// ToolCall is a tool call of a step: a tool name and its arguments (JSON).
type ToolCall struct{ Name, Args string }

// Call is a ToolCall.
func Call(name, args string) ToolCall { return ToolCall{name, args} }

// Server is a local model API speaking OpenAI chat completions
// (POST .../chat/completions) and Anthropic messages (POST .../messages),
// streaming, answering each request with the next step of its script. It
// keeps every request body.
type Server struct {
	t *testing.T
	// URL is the base URL of the OpenAI API (…/v1); the Anthropic API's
	// is the same without /v1.
	URL string

	mu       sync.Mutex
	script   []Step
	requests []map[string]any
}

// NewServer starts a server answering with script, closed at cleanup.
func NewServer(t *testing.T, script ...Step) *Server {
	m := &Server{t: t, script: script}
	srv := httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(srv.Close)
	m.URL = srv.URL + "/v1"
	return m
}

// Requests is a copy of the requests so far.
func (m *Server) Requests() []map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]map[string]any(nil), m.requests...)
}

func (m *Server) serve(w http.ResponseWriter, r *http.Request) {
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
	if s.Stall > 0 {
		select {
		case <-time.After(s.Stall):
		case <-r.Context().Done():
			return
		}
	}
	if s.Status != 0 {
		if s.RetryAfter != "" {
			w.Header().Set("Retry-After", s.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.Status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"scripted","message":"scripted status %d"}}`, s.Status)
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

func openAIStream(w http.ResponseWriter, s Step) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if s.Text != "" {
		half := len(s.Text) / 2
		sse(w, "", chunk(map[string]any{"content": s.Text[:half]}, nil))
		if s.Drop {
			breakOff()
		}
		sse(w, "", chunk(map[string]any{"content": s.Text[half:]}, nil))
	}
	for i, c := range s.Calls {
		sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		half := len(c.Args) / 2
		for _, part := range []string{c.Args[:half], c.Args[half:]} {
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	if s.Drop {
		breakOff()
	}
	finish := "stop"
	if len(s.Calls) > 0 {
		finish = "tool_calls"
	}
	sse(w, "", chunk(map[string]any{}, finish))
	sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "scripted", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush(w)
}

func anthropicStream(w http.ResponseWriter, s Step) {
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"content": []any{}, "model": "scripted", "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 1}}})
	i := 0
	if s.Text != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		half := len(s.Text) / 2
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s.Text[:half]}})
		if s.Drop {
			breakOff()
		}
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s.Text[half:]}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	for n, c := range s.Calls {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": c.Name, "input": map[string]any{}}})
		half := len(c.Args) / 2
		for _, part := range []string{c.Args[:half], c.Args[half:]} {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		i++
	}
	if s.Drop {
		breakOff()
	}
	stop := "end_turn"
	if len(s.Calls) > 0 {
		stop = "tool_use"
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
