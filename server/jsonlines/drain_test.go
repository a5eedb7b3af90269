package jsonlines_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server/jsonlines"
)

// A client that writes its requests and closes its end (`printf ... |
// legate stdio`) gets an answer to every request before the server ends,
// even one whose tool is still running when the input ends.
func TestEveryRequestReadIsAnsweredAtTheEndOfInput(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow_echo"}, func(ctx context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow_echo","arguments":{"text":"still here"}}}
`
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.Run(ctx, &jsonlines.Transport{R: strings.NewReader(input), W: &out, Log: slog.New(slog.DiscardHandler), Max: jsonlines.MaxLine})
	if ctx.Err() != nil {
		t.Fatalf("still serving after the end of input: %v", err)
	}
	answers := map[float64]string{}
	for line := range strings.Lines(out.String()) {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Error != nil {
			t.Fatalf("answer %q", line)
		}
		answers[m.ID] = string(m.Result)
	}
	if len(answers) != 3 || !strings.Contains(answers[2], `"slow_echo"`) || !strings.Contains(answers[3], "still here") {
		t.Fatalf("answered %d of 3 requests:\n%s", len(answers), out.String())
	}
}
