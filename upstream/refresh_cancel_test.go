package upstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
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

// A re-list a tools/list_changed asked for, still in flight when the
// manager closes (a CLI command such as legate upstream test is done),
// logs no warning: nothing failed.
func TestRelistCutShortByCloseLogsNothing(t *testing.T) {
	var logs syncBuffer
	fx := upstreamtest.NewStdio(t)
	fx.SetNotify(true)
	fx.SetSlowRelist(true)
	m := newManager(t, memStore(t), upstream.Options{Logger: debugLogger(&logs)}, stdioConfig("n", fx))
	if _, err := m.Refresh(context.Background(), "n"); err != nil {
		t.Fatal(err)
	}
	pids := fx.PIDs()
	if len(pids) != 1 {
		t.Fatalf("processes %v", pids)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return fx.Lists(pids[0]) >= 2 }, "the list_changed never asked for a re-list")
	m.Close()
	if got := logs.String(); strings.Contains(got, `"level":"WARN"`) || strings.Contains(got, `"level":"ERROR"`) {
		t.Errorf("logged:\n%s", got)
	}
}
