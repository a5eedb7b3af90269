package upstreamtest

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoIn is the input of the fixture tools that take text.
type EchoIn struct {
	Text string `json:"text,omitempty"`
}

// NewEchoServer is a go-sdk server with the read-only tool "echo", which
// returns its text argument.
func NewEchoServer(name string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	AddEcho(srv, "echo")
	return srv
}

// AddEcho adds a read-only tool that returns its text argument.
func AddEcho(srv *mcp.Server, name string) {
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "Echo text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
}

// AddSlow adds a tool that works for total, sending a progress
// notification every step when the caller asked for progress (step 0:
// none), then returns "done".
func AddSlow(srv *mcp.Server, name string, total, step time.Duration) {
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "Work slowly."},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			end := time.Now().Add(total)
			token := req.Params.GetProgressToken()
			n := 0.0
			for time.Now().Before(end) {
				wait := time.Until(end)
				if step > 0 && step < wait {
					wait = step
				}
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(wait):
				}
				if step > 0 && token != nil {
					n++
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: n, Message: "working"})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
}

// Text is the text of a result's text contents, joined.
func Text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// SameJSON reports whether two JSON documents are equal as values.
func SameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return string(p) == string(q)
}
