package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate/config"
)

// Message is one message of a conversation, in a form both providers'
// messages are made from and that the record keeps.
type Message struct {
	// Role is user, assistant or tool.
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// IsError marks a tool message whose call failed.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is one tool call a model asked for.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolDef is a tool as offered to a model.
type ToolDef struct {
	Name        string
	Description string
	// Schema is the input JSON schema, an object schema.
	Schema map[string]any
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Turn is what one model call is asked: the system prompt, the
// conversation so far and the tools offered. A Model never changes it.
type Turn struct {
	System   string
	Messages []Message
	Tools    []ToolDef
}

// Reply is a model's answer to one Turn.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
}

// Model is a model behind its provider's API. Turn streams one call,
// calling got each time bytes of the answer arrive; an answer whose stream
// ends before the provider said it was complete is ErrDropped.
type Model interface {
	Turn(ctx context.Context, t Turn, got func()) (*Reply, error)
}

// Profile is a model profile: who serves the model, and how to call it.
type Profile struct {
	Provider       string
	Model          string
	URL            string
	AccessToken    string
	Temperature    float64
	MaxTokens      int
	RequestTimeout time.Duration
	MaxRetries     int
}

// Defaults of a model profile.
const (
	DefaultTemperature    = 0.2
	DefaultRequestTimeout = 180 * time.Second
	DefaultMaxRetries     = 3
)

// defaultURLs are the providers' OpenAI-compatible endpoints (openai and
// anthropic: the SDK's own default).
var defaultURLs = map[string]string{
	"gemini":     "https://generativelanguage.googleapis.com/v1beta/openai/",
	"openrouter": "https://openrouter.ai/api/v1",
	"groq":       "https://api.groq.com/openai/v1",
	"deepseek":   "https://api.deepseek.com/v1",
	"mistral":    "https://api.mistral.ai/v1",
	"together":   "https://api.together.xyz/v1",
	"fireworks":  "https://api.fireworks.ai/inference/v1",
	"xai":        "https://api.x.ai/v1",
	"ollama":     "http://127.0.0.1:11434/v1",
}

// check completes p with its defaults and reports what is missing.
func (p *Profile) check() error {
	p.Provider = strings.ToLower(strings.TrimSpace(p.Provider))
	if p.Provider == "" {
		p.Provider = "openai"
	}
	if !slices.Contains(config.AgentProviders, p.Provider) {
		return fmt.Errorf("model provider %q: want one of %s", p.Provider, strings.Join(config.AgentProviders, ", "))
	}
	if p.URL == "" {
		p.URL = defaultURLs[p.Provider]
	}
	switch {
	case p.Model == "":
		return fmt.Errorf("model profile: no model named (agent.model.model, or --model)")
	case p.Provider == "openai-compatible" && p.URL == "":
		return fmt.Errorf("model provider openai-compatible needs a url (agent.model.url)")
	case p.AccessToken == "" && p.Provider != "ollama" && p.Provider != "openai-compatible":
		return fmt.Errorf("model provider %s needs an access token (agent.model.access_token)", p.Provider)
	}
	if p.RequestTimeout <= 0 {
		p.RequestTimeout = DefaultRequestTimeout
	}
	if p.MaxRetries < 0 {
		p.MaxRetries = 0
	}
	return nil
}

// New returns the Model p names: Anthropic's Messages API for anthropic,
// the OpenAI chat completions API for every other provider.
func New(p Profile) (Model, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if p.Provider == "anthropic" {
		return newAnthropic(p), nil
	}
	return newOpenAI(p), nil
}

// profileKeys are the keys of a model profile, each with the spellings it
// is known by once case, spaces, dashes and underscores are dropped.
var profileKeys = map[string][]string{
	"provider":        {"provider", "vendor", "api", "type"},
	"model":           {"model", "modelname", "modelid", "name"},
	"url":             {"url", "baseurl", "endpoint", "apiurl", "apibase", "host", "baseuri"},
	"access_token":    {"accesstoken", "apikey", "token", "key", "secret", "bearer", "authtoken"},
	"temperature":     {"temperature", "temp"},
	"max_tokens":      {"maxtokens", "maxoutputtokens", "maxcompletiontokens", "tokens"},
	"request_timeout": {"requesttimeout", "requesttimeouts", "timeout", "timeouts"},
	"max_retries":     {"maxretries", "retries", "retry"},
}

// normKey drops case, spaces, dashes, underscores and dots.
func normKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r != ' ' && r != '-' && r != '_' && r != '.' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ParseProfile reads a model profile typed by hand, matching its keys
// leniently: case, spaces, dashes and underscores do not matter, and the
// obvious synonyms are accepted (api_key for access_token, base_url for
// url, timeout or request_timeout_s for request_timeout). Values may be
// strings or numbers; a timeout is a duration ("90s") or seconds. The
// access token is a value here: a caller hands it with the profile. An
// unknown key is an error naming it.
func ParseProfile(m map[string]any) (Profile, error) {
	var p Profile
	p.Temperature = -1
	for k, v := range m {
		key := canonicalKey(k)
		if key == "" {
			return p, fmt.Errorf("model profile: unknown key %q (known: provider, model, url, access_token, temperature, max_tokens, request_timeout, max_retries)", k)
		}
		s := strings.TrimSpace(fmt.Sprint(v))
		var err error
		switch key {
		case "provider":
			p.Provider = s
		case "model":
			p.Model = s
		case "url":
			p.URL = s
		case "access_token":
			p.AccessToken = s
		case "temperature":
			p.Temperature, err = strconv.ParseFloat(s, 64)
		case "max_tokens":
			p.MaxTokens, err = atoi(s)
		case "max_retries":
			p.MaxRetries, err = atoi(s)
		case "request_timeout":
			p.RequestTimeout, err = seconds(s)
		}
		if err != nil {
			return p, fmt.Errorf("model profile: %s: %q is not a number", k, s)
		}
	}
	if p.Temperature < 0 {
		p.Temperature = DefaultTemperature
	}
	if _, set := lookup(m, "max_retries"); !set {
		p.MaxRetries = DefaultMaxRetries
	}
	return p, nil
}

// canonicalKey is the profile key k spells, "" for none. A trailing unit
// (_s, _seconds) is dropped.
func canonicalKey(k string) string {
	n := normKey(k)
	for _, unit := range []string{"seconds", "secs", "s"} {
		if t, ok := strings.CutSuffix(n, unit); ok && strings.HasSuffix(t, "timeout") {
			n = t
		}
	}
	for key, names := range profileKeys {
		if slices.Contains(names, n) {
			return key
		}
	}
	return ""
}

func lookup(m map[string]any, key string) (any, bool) {
	for k, v := range m {
		if canonicalKey(k) == key {
			return v, true
		}
	}
	return nil, false
}

func atoi(s string) (int, error) {
	f, err := strconv.ParseFloat(s, 64)
	return int(f), err
}

// seconds reads a duration ("90s", "2m") or a number of seconds.
func seconds(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second)), err
}
