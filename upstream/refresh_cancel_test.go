package upstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/upstream"
)

// A refresh given up by its caller (a process shutting down) records no
// failure of the upstream's, and logs none.
func TestCancelledRefreshRecordsNoFailure(t *testing.T) {
	var logs syncBuffer
	m := newManager(t, memStore(t), upstream.Options{Logger: debugLogger(&logs)}, upstream.Config{ID: "down", URL: "http://127.0.0.1:1/mcp"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Refresh(ctx, "down"); err == nil {
		t.Fatal("a refresh of an unreachable upstream with a cancelled context succeeded")
	}
	if s := status(t, m, "down"); s.LastError != "" {
		t.Errorf("last error recorded: %q", s.LastError)
	}
	if got := logs.String(); got != "" && (strings.Contains(got, "level=ERROR") || strings.Contains(got, "recording refresh failure")) {
		t.Errorf("logged:\n%s", got)
	}
}
