package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// brokenExpiry is a store whose approvals cannot be expired.
type brokenExpiry struct{ *sqlite.Store }

func (s brokenExpiry) Approvals() store.ApprovalStore {
	return brokenExpiryApprovals{s.Store.Approvals()}
}

type brokenExpiryApprovals struct{ store.ApprovalStore }

func (brokenExpiryApprovals) Expire(context.Context, time.Time) (int, error) {
	return 0, errors.New("database is locked")
}

// TestBackgroundErrorsAreCounted: an error of the executor's background
// work (here, expiring requests) is not dropped: it is counted by
// operation (and logged).
func TestBackgroundErrorsAreCounted(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(testConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: brokenExpiry{memStore(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(ctx)
	url := serve(t, gw)
	waitFor(t, "the expiry's error to be counted", func() bool {
		return metric(t, url, `legate_background_errors_total{op="expire"}`) >= 1
	})
}
