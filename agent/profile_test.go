package agent_test

import (
	"testing"
	"time"

	"github.com/legate-mcp/legate/agent"
)

// A model profile typed by hand: keys matched across case, spaces, dashes,
// underscores and synonyms.
func TestParseProfileLenient(t *testing.T) {
	p, err := agent.ParseProfile(map[string]any{
		"Provider": "anthropic", "Model Name": "claude-x", "base-url": "http://127.0.0.1:9/", "API_KEY": "sk-1",
		"temp": 0.7, "Max-Tokens": "2048", "request_timeout_s": 90, "Retries": 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Profile{Provider: "anthropic", Model: "claude-x", URL: "http://127.0.0.1:9/", AccessToken: "sk-1",
		Temperature: 0.7, MaxTokens: 2048, RequestTimeout: 90 * time.Second, MaxRetries: 5}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	// Defaults: temperature 0.2, max_retries 3; a timeout as a duration.
	p, err = agent.ParseProfile(map[string]any{"model": "m", "timeout": "2m"})
	if err != nil || p.Temperature != 0.2 || p.MaxRetries != 3 || p.RequestTimeout != 2*time.Minute {
		t.Errorf("defaults: %+v %v", p, err)
	}
	for _, bad := range []map[string]any{{"colour": "red"}, {"temperature": "warm"}} {
		if _, err := agent.ParseProfile(bad); err == nil {
			t.Errorf("ParseProfile(%v): no error", bad)
		}
	}
	// New checks what a provider needs.
	for _, p := range []agent.Profile{{Provider: "openai", Model: "m"}, {Provider: "openai-compatible", Model: "m"}, {Provider: "nope", Model: "m"}, {Provider: "ollama"}} {
		if _, err := agent.New(p); err == nil {
			t.Errorf("New(%+v): no error", p)
		}
	}
	if _, err := agent.New(agent.Profile{Provider: "ollama", Model: "llama3.1"}); err != nil {
		t.Errorf("ollama needs no token nor url: %v", err)
	}
}
