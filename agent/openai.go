package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/legate-mcp/legate/agent/internal/wire"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// ErrDropped is a streamed answer that ended before the provider said it
// was complete: the connection was dropped mid-answer.
var ErrDropped = errors.New("the model's answer stream ended before the answer was complete")

// defaultOpenAIURL is the OpenAI API's base URL, when neither the profile
// nor $OPENAI_BASE_URL gives one.
const defaultOpenAIURL = "https://api.openai.com/v1/"

// openAIModel speaks the OpenAI chat completions API, for OpenAI and
// every OpenAI-compatible provider: POST {url}/chat/completions, streamed.
type openAIModel struct {
	url string
	hc  *http.Client
	p   Profile
}

func newOpenAI(p Profile) *openAIModel {
	base := cmp.Or(p.URL, os.Getenv("OPENAI_BASE_URL"), defaultOpenAIURL)
	return &openAIModel{url: strings.TrimRight(base, "/") + "/chat/completions", hc: modelClient(base, p), p: p}
}

type openAIFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIToolCall struct {
	Index    int64  `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openAIMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
}

type openAIRequest struct {
	Model         string          `json:"model"`
	Messages      []openAIMessage `json:"messages"`
	Temperature   float64         `json:"temperature"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Tools         []openAITool    `json:"tools,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type openAIChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string           `json:"content"`
			ToolCalls []openAIToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// modelClient is the HTTP client of a model at base: guarded, with base's
// host allowed whatever its address (an operator's choice, such as a local
// Ollama), and a time limit past the attempt's own deadline.
func modelClient(base string, p Profile) *http.Client {
	var allow []string
	if hp, err := netguard.HostPort(base); err == nil {
		allow = []string{hp}
	}
	timeout := cmp.Or(p.RequestTimeout, DefaultRequestTimeout)
	return netguard.NewClient(netguard.Options{Allow: allow, Timeout: timeout + time.Second,
		Hint: "only the model profile's own url may be on such an address"})
}

func (m *openAIModel) Turn(ctx context.Context, t Turn, got func()) (*Reply, error) {
	req := openAIRequest{Model: m.p.Model, Messages: openAIMessages(t), Temperature: m.p.Temperature, Stream: true}
	req.StreamOptions.IncludeUsage = true
	if m.p.MaxTokens > 0 {
		req.MaxTokens = m.p.MaxTokens
	}
	for _, tool := range t.Tools {
		req.Tools = append(req.Tools, openAITool{Type: "function", Function: openAIFunction{Name: tool.Name, Description: tool.Description, Parameters: tool.Schema}})
	}
	key := m.p.AccessToken
	if key == "" {
		key = "none"
	}
	stream, err := wire.Post(ctx, m.hc, m.url, http.Header{"Authorization": {"Bearer " + key}}, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	var (
		reply    Reply
		text     []byte
		finished bool
		calls    = map[int64]*ToolCall{}
		args     = map[int64][]byte{}
	)
	for stream.Next() {
		got()
		if string(stream.Data()) == "[DONE]" {
			break
		}
		var chunk openAIChunk
		if err := json.Unmarshal(stream.Data(), &chunk); err != nil {
			return nil, err
		}
		if chunk.Error != nil {
			return nil, errors.New("the model's answer stream: " + chunk.Error.Message)
		}
		if u := chunk.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
			reply.Usage = Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			text = append(text, ch.Delta.Content...)
			for _, tc := range ch.Delta.ToolCalls {
				c := calls[tc.Index]
				if c == nil {
					c = &ToolCall{}
					calls[tc.Index] = c
				}
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if tc.Function.Name != "" {
					c.Name += tc.Function.Name
				}
				args[tc.Index] = append(args[tc.Index], tc.Function.Arguments...)
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if !finished {
		return nil, ErrDropped
	}
	reply.Text = string(text)
	idx := make([]int64, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		c := calls[i]
		c.Arguments = rawArgs(args[i])
		reply.ToolCalls = append(reply.ToolCalls, *c)
	}
	return &reply, nil
}

// rawArgs are a tool call's arguments as JSON: {} for none, and a string
// holding what the model wrote when that is not JSON.
func rawArgs(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if !json.Valid(b) {
		s, _ := json.Marshal(string(b))
		return s
	}
	return json.RawMessage(b)
}

// openAIMessages is the conversation of t as chat completion messages.
func openAIMessages(t Turn) []openAIMessage {
	text := func(s string) *string { return &s }
	out := []openAIMessage{{Role: "system", Content: text(t.System)}}
	for _, msg := range t.Messages {
		switch msg.Role {
		case "user":
			out = append(out, openAIMessage{Role: "user", Content: text(msg.Content)})
		case "tool":
			out = append(out, openAIMessage{Role: "tool", Content: text(msg.Content), ToolCallID: msg.ToolCallID})
		case "assistant":
			a := openAIMessage{Role: "assistant"}
			if msg.Content != "" {
				a.Content = text(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				tc := openAIToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = c.Name, string(c.Arguments)
				a.ToolCalls = append(a.ToolCalls, tc)
			}
			out = append(out, a)
		}
	}
	return out
}
