package jsonlines

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is a second implementation of the SDK's stdio transport:
// on valid input it must answer exactly what the SDK's own answers, byte
// for byte.
func TestLineTransportMatchesTheSDK(t *testing.T) {
	script := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo \"q\" \u2028 <&>"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nosuch"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"nosuch/method"}`,
		"\t{ \"jsonrpc\" : \"2.0\", \"id\" : 6, \"method\" : \"ping\" }\r",
	}
	sdk := runScript(t, func(r io.ReadCloser, w io.WriteCloser) mcp.Transport { return &mcp.IOTransport{Reader: r, Writer: w} }, script)
	ours := runScript(t, func(r io.ReadCloser, w io.WriteCloser) mcp.Transport {
		return &Transport{R: r, W: w, Log: slog.New(slog.DiscardHandler), Max: MaxLine}
	}, script)
	if len(sdk) != len(ours) {
		t.Fatalf("the SDK answered %d lines, Transport %d:\n%q\n%q", len(sdk), len(ours), sdk, ours)
	}
	for i := range sdk {
		if sdk[i] != ours[i] {
			t.Errorf("answer %d:\nSDK  %s\nours %s", i, sdk[i], ours[i])
		}
	}
}

// runScript serves a test server over the transport made by mk, sends the
// script's lines and returns the lines answered (one per request).
func runScript(t *testing.T, mk func(io.ReadCloser, io.WriteCloser) mcp.Transport, script []string) []string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "cmp", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), mk(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	lines := bufio.NewScanner(outR)
	var got []string
	for _, line := range script {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if line == `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
			continue // no answer
		}
		done := make(chan bool, 1)
		go func() { done <- lines.Scan() }()
		select {
		case ok := <-done:
			if !ok {
				t.Fatalf("no answer to %s: %v", line, lines.Err())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to %s within 10s", line)
		}
		got = append(got, lines.Text())
	}
	return got
}
