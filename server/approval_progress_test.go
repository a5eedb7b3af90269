package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server"
)

// A call held for approval tells the client at once what it waits for and
// how to approve it: progress notifications for its progressToken, and a
// log message for a client that set a log level; then APPROVAL_PENDING.
func TestHeldCallTellsTheClientWhatItWaitsFor(t *testing.T) {
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	gw, err := server.New(context.Background(), server.Options{Store: memStore(t), Config: parse(t, `
approvals: {wait: 1500ms}
connectors:
  - {id: e, type: echo-test, credentials: {key: {env: LEGATE_TEST_KEY}}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	var mu sync.Mutex
	var progress, logs []string
	var firstProgress time.Time
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if r.Params.ProgressToken == "tok" {
				if progress == nil {
					firstProgress = time.Now()
				}
				progress = append(progress, r.Params.Message)
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			if s, ok := r.Params.Data.(string); ok {
				logs = append(logs, string(r.Params.Level)+" "+s)
			}
		},
	})
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serve(t, gw)}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "e__fail", Arguments: map[string]any{"text": "x"}}
	params.SetProgressToken("tok")
	start := time.Now()
	res, err := cs.CallTool(ctx, params)
	returned := time.Now()
	if err != nil || resultCode(res) != "APPROVAL_PENDING" {
		t.Fatalf("the held call: %v %v", res, err)
	}
	id, _ := res.StructuredContent.(map[string]any)["error"].(map[string]any)["approval_id"].(string)
	mu.Lock()
	defer mu.Unlock()
	if len(progress) == 0 {
		t.Fatal("no progress notification while the call was held")
	}
	if firstProgress.Sub(start) > 500*time.Millisecond || !firstProgress.Before(returned) {
		t.Errorf("the first progress notification came %s after the call (which returned after %s)", firstProgress.Sub(start), returned.Sub(start))
	}
	for _, m := range append([]string{progress[0]}, logs...) {
		if id == "" || !strings.Contains(m, "waiting for approval "+id) || !strings.Contains(m, "legate approvals approve "+id) || !strings.Contains(m, "APPROVAL_PENDING") {
			t.Errorf("the client was told %q, want the approval %q and how to approve it", m, id)
		}
	}
	if len(logs) != 1 || !strings.HasPrefix(logs[0], "info ") {
		t.Errorf("log messages %q, want one at info", logs)
	}
}
