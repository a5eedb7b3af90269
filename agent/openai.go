package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// ErrDropped is a streamed answer that ended before the provider said it
// was complete: the connection was dropped mid-answer.
var ErrDropped = errors.New("the model's answer stream ended before the answer was complete")

// openAIModel speaks the OpenAI chat completions API, for OpenAI and
// every OpenAI-compatible provider.
type openAIModel struct {
	client openai.Client
	p      Profile
}

func newOpenAI(p Profile) *openAIModel {
	// The loop retries, knowing a stall from a verdict: the SDK does not.
	opts := []option.RequestOption{option.WithMaxRetries(0)}
	if p.URL != "" {
		opts = append(opts, option.WithBaseURL(p.URL))
	}
	if p.AccessToken != "" {
		opts = append(opts, option.WithAPIKey(p.AccessToken))
	} else {
		opts = append(opts, option.WithAPIKey("none"))
	}
	return &openAIModel{client: openai.NewClient(opts...), p: p}
}

func (m *openAIModel) Turn(ctx context.Context, t Turn, got func()) (*Reply, error) {
	params := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.p.Model),
		Messages:      openAIMessages(t),
		Temperature:   openai.Float(m.p.Temperature),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if m.p.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(m.p.MaxTokens))
	}
	for _, tool := range t.Tools {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        tool.Name,
			Description: openai.String(tool.Description),
			Parameters:  shared.FunctionParameters(tool.Schema),
		}))
	}
	stream := m.client.Chat.Completions.NewStreaming(ctx, params)
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
		chunk := stream.Current()
		if chunk.Usage.PromptTokens > 0 || chunk.Usage.CompletionTokens > 0 {
			reply.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
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
func openAIMessages(t Turn) []openai.ChatCompletionMessageParamUnion {
	out := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(t.System)}
	for _, msg := range t.Messages {
		switch msg.Role {
		case "user":
			out = append(out, openai.UserMessage(msg.Content))
		case "tool":
			out = append(out, openai.ToolMessage(msg.Content, msg.ToolCallID))
		case "assistant":
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(c.Arguments)},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}
