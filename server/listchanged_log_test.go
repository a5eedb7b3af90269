package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"
	"github.com/legate-mcp/legate/server"
)

// Sessions whose clients went away (initialized, then never heard from,
// with no stream open) are not told that the tools changed: the log says
// so once for the broadcast, not once per session.
func TestListChangedToAbandonedSessionsLogsOneLine(t *testing.T) {
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	var logs syncbuf.Buffer
	gw, err := server.New(context.Background(), server.Options{Config: parse(t, testConfig), Store: memStore(t),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	url := serve(t, gw)
	const abandoned = 9
	for range abandoned {
		resp := post(t, url, "", "application/json, text/event-stream", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`)
		sid := resp.Header.Get("Mcp-Session-Id")
		readAll(t, resp)
		readAll(t, post(t, url, sid, "application/json, text/event-stream", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	if err := gw.Reload(context.Background(), parse(t, testConfig+"  - {id: added, type: echo-test}\n")); err != nil {
		t.Fatal(err)
	}
	// Each session is named at debug (or, as the SDK does, at warn).
	waitFor(t, "the broadcast to the abandoned sessions", func() bool { return strings.Count(logs.String(), "list_changed") >= abandoned })
	time.Sleep(time.Second) // the summary comes once the broadcast settles
	var loud []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "list_changed") && !strings.Contains(line, "level=DEBUG") {
			loud = append(loud, line)
		}
	}
	if len(loud) != 1 || !strings.Contains(loud[0], "sessions=9") {
		t.Errorf("%d lines above debug for one list_changed to %d abandoned sessions, want one naming them all:\n%s", len(loud), abandoned, strings.Join(loud, ""))
	}
}
