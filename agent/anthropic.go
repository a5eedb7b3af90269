package agent

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// defaultAnthropicMaxTokens is max_tokens when the profile sets none: the
// Messages API requires one.
const defaultAnthropicMaxTokens = 4096

// anthropicModel speaks Anthropic's Messages API.
type anthropicModel struct {
	client anthropic.Client
	p      Profile
}

func newAnthropic(p Profile) *anthropicModel {
	opts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(p.AccessToken)}
	if p.URL != "" {
		opts = append(opts, option.WithBaseURL(p.URL))
	}
	return &anthropicModel{client: anthropic.NewClient(opts...), p: p}
}

func (m *anthropicModel) Turn(ctx context.Context, t Turn, got func()) (*Reply, error) {
	maxTokens := int64(m.p.MaxTokens)
	if maxTokens <= 0 {
		maxTokens = defaultAnthropicMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(m.p.Model),
		MaxTokens: maxTokens,
		Messages:  anthropicMessages(t.Messages),
	}
	if t.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: t.System}}
	}
	for _, tool := range t.Tools {
		schema := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range tool.Schema {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				for _, r := range asSlice(v) {
					if s, ok := r.(string); ok {
						schema.Required = append(schema.Required, s)
					}
				}
			default:
				schema.ExtraFields[k] = v
			}
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: tool.Name, Description: anthropic.String(tool.Description), InputSchema: schema,
		}})
	}
	stream := m.client.Messages.NewStreaming(ctx, params, option.WithJSONSet("temperature", m.p.Temperature))
	defer stream.Close()
	var (
		msg     anthropic.Message
		stopped bool
	)
	for stream.Next() {
		got()
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, err
		}
		if ev.Type == "message_stop" {
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	if !stopped {
		return nil, ErrDropped
	}
	reply := &Reply{Usage: Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens}}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			reply.Text += b.Text
		case "tool_use":
			reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: rawArgs(b.Input)})
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
func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, msg := range msgs {
		switch msg.Role {
		case "user":
			out = append(out, anthropic.NewUserMessage(anthropic.NewTextBlock(msg.Content)))
		case "tool":
			block := anthropic.NewToolResultBlock(msg.ToolCallID, msg.Content, msg.IsError)
			if n := len(out); n > 0 && out[n-1].OfUser != nil && len(out[n-1].OfUser.Content) > 0 && out[n-1].OfUser.Content[0].OfToolResult != nil {
				out[n-1].OfUser.Content = append(out[n-1].OfUser.Content, block)
				continue
			}
			out = append(out, anthropic.NewUserMessage(block))
		case "assistant":
			var blocks []anthropic.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Content))
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
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock("(no answer)"))
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		}
	}
	return out
}
