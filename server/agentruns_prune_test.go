package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// A serving gateway deletes the agent runs that ended longer ago than
// agent.retention, and keeps the others.
func TestAgentRunsPrunedAfterTheirRetention(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := memStore(t)
	old, now := time.Now().Add(-2*time.Hour), time.Now()
	for _, r := range []store.AgentRun{
		{ID: "old", Stopped: "answered", StartedAt: old, UpdatedAt: old, Record: []byte(`{}`)},
		{ID: "old-running", Stopped: "running", StartedAt: old, UpdatedAt: old, Record: []byte(`{}`)},
		{ID: "recent", Stopped: "answered", StartedAt: now, UpdatedAt: now, Record: []byte(`{}`)},
	} {
		if err := st.AgentRuns().Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Parse([]byte("agent: {retention: 1h}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	gw.Start(ctx)
	waitFor(t, "the old run pruned", func() bool {
		_, err := st.AgentRuns().Get(ctx, "old")
		return errors.Is(err, store.ErrNotFound)
	})
	for _, id := range []string{"old-running", "recent"} {
		if _, err := st.AgentRuns().Get(ctx, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
