package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

// A watch whose connection the server ends connects again, says so ("":
// changes may have been missed meanwhile), and tells of later changes.
func TestWatchReconnects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ch := st.Watch(ctx)
	next := func() string {
		select {
		case id, ok := <-ch:
			if !ok {
				t.Fatal("the watch ended")
			}
			return id
		case <-time.After(30 * time.Second):
			t.Fatal("the watch told nothing within 30s")
		}
		return ""
	}
	if id := next(); id != "" {
		t.Fatalf("first word %q, want \"\"", id)
	}
	var ended int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN legate_approvals' AND pid <> pg_backend_pid()`).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ended %d listening connections (%v), want 1", ended, err)
	}
	if id := next(); id != "" {
		t.Fatalf("after its connection ended, the watch said %q, want \"\" (listening again)", id)
	}
	now := time.Now()
	a := &store.Approval{ID: "ap_after", Principal: "p", Tool: "t.x", Class: "write", Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if id := next(); id != "ap_after" {
		t.Fatalf("told %q, want ap_after", id)
	}
	cancel()
	for range ch { // closed once ctx ends
	}
}
