package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/legate-mcp/legate/agent/internal/wire"
)

// defaultAnthropicMaxTokens is max_tokens when the profile sets none: the
// Messages API requires one.
const defaultAnthropicMaxTokens = 4096

// defaultAnthropicURL is the Messages API's base URL when neither the
// profile nor $ANTHROPIC_BASE_URL gives one; anthropicVersion the
// API version sent with each request.
const (
	defaultAnthropicURL = "https://api.anthropic.com/"
	anthropicVersion    = "2023-06-01"
)

// anthropicModel speaks Anthropic's Messages API: POST {url}/v1/messages,
// streamed.
type anthropicModel struct {
	url string
	hc  *http.Client
	p   Profile
}

func newAnthropic(p Profile) *anthropicModel {
	base := cmp.Or(p.URL, os.Getenv("ANTHROPIC_BASE_URL"), defaultAnthropicURL)
	return &anthropicModel{url: strings.TrimRight(base, "/") + "/v1/messages", hc: modelClient(base, p), p: p}
}

type anthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     any              `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	Content   []anthropicBlock `json:"content,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

type anthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int64              `json:"max_tokens"`
	Messages    []anthropicMessage `json:"messages"`
	System      []anthropicBlock   `json:"system,omitempty"`
	Tools       []anthropicTool    `json:"tools,omitempty"`
	Temperature float64            `json:"temperature"`
	Stream      bool               `json:"stream"`
}

type anthropicUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// anthropicEvent is one event of the stream, the fields of every type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m *anthropicModel) Turn(ctx context.Context, t Turn, got func()) (*Reply, error) {
	maxTokens := int64(m.p.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = defaultAnthropicMaxTokens
	}
	req := anthropicRequest{Model: m.p.Model, MaxTokens: maxTokens, Messages: anthropicMessages(t.Messages), Temperature: m.p.Temperature, Stream: true}
	if t.System != "" {
		req.System = []anthropicBlock{{Type: "text", Text: t.System}}
	}
	for _, tool := range t.Tools {
		schema := map[string]any{"type": "object"}
		for k, v := range tool.Schema {
			switch k {
			case "type":
			case "required":
				var req []string
				for _, r := range asSlice(v) {
					if s, ok := r.(string); ok {
						req = append(req, s)
					}
				}
				if req != nil {
					schema["required"] = req
				}
			default:
				schema[k] = v
			}
		}
		req.Tools = append(req.Tools, anthropicTool{Name: tool.Name, Description: tool.Description, InputSchema: schema})
	}
	header := http.Header{"X-Api-Key": {m.p.AccessToken}, "Anthropic-Version": {anthropicVersion}}
	stream, err := wire.Post(ctx, m.hc, m.url, header, req)
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	type block struct {
		typ, text, id, name string
		input               []byte
	}
	var (
		blocks  = map[int]*block{}
		order   []int
		usage   Usage
		stopped bool
	)
	for stream.Next() {
		got()
		var ev anthropicEvent
		if err := json.Unmarshal(stream.Data(), &ev); err != nil {
			return nil, err
		}
		switch ev.Type {
		case "message_start":
			usage = Usage{InputTokens: ev.Message.Usage.InputTokens, OutputTokens: ev.Message.Usage.OutputTokens}
		case "content_block_start":
			if _, ok := blocks[ev.Index]; !ok {
				order = append(order, ev.Index)
			}
			cb := ev.ContentBlock
			blocks[ev.Index] = &block{typ: cb.Type, text: cb.Text, id: cb.ID, name: cb.Name}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return nil, errors.New("the model's answer stream: a delta of a content block never started")
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text += ev.Delta.Text
			case "input_json_delta":
				b.input = append(b.input, ev.Delta.PartialJSON...)
			}
		case "message_delta":
			if ev.Usage != nil {
				usage.OutputTokens = ev.Usage.OutputTokens
				if ev.Usage.InputTokens > 0 {
					usage.InputTokens = ev.Usage.InputTokens
				}
			}
		case "message_stop":
			stopped = true
		case "error":
			msg := "an error event"
			if ev.Error != nil {
				msg = ev.Error.Type + ": " + ev.Error.Message
			}
			return nil, errors.New("the model's answer stream: " + msg)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if !stopped {
		return nil, ErrDropped
	}
	reply := &Reply{Usage: usage}
	for _, i := range order {
		b := blocks[i]
		switch b.typ {
		case "text":
			reply.Text += b.text
		case "tool_use":
			reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: rawArgs(b.input)})
		}
	}
	return reply, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	if s == nil {
		if ss, ok := v.([]string); ok {
			for _, x := range ss {
				s = append(s, x)
			}
		}
	}
	return s
}

// anthropicMessages is the conversation as Messages API messages: a run of
// tool results is one user message, as the API wants.
func anthropicMessages(msgs []Message) []anthropicMessage {
	var out []anthropicMessage
	for _, msg := range msgs {
		switch msg.Role {
		case "user":
			out = append(out, anthropicMessage{Role: "user", Content: []anthropicBlock{{Type: "text", Text: msg.Content}}})
		case "tool":
			block := anthropicBlock{Type: "tool_result", ToolUseID: msg.ToolCallID, Content: []anthropicBlock{{Type: "text", Text: msg.Content}}, IsError: msg.IsError}
			if n := len(out); n > 0 && out[n-1].Role == "user" && len(out[n-1].Content) > 0 && out[n-1].Content[0].Type == "tool_result" {
				out[n-1].Content = append(out[n-1].Content, block)
				continue
			}
			out = append(out, anthropicMessage{Role: "user", Content: []anthropicBlock{block}})
		case "assistant":
			var blocks []anthropicBlock
			if msg.Content != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: msg.Content})
			}
			for _, c := range msg.ToolCalls {
				var input any = map[string]any{}
				if len(c.Arguments) > 0 {
					var v any
					if json.Unmarshal(c.Arguments, &v) == nil {
						if _, ok := v.(map[string]any); ok {
							input = v
						}
					}
				}
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: "(no answer)"})
			}
			out = append(out, anthropicMessage{Role: "assistant", Content: blocks})
		}
	}
	return out
}
