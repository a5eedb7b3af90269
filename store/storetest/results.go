package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testResults(t *testing.T, open Opener) {
	ctx := context.Background()
	kept := open(t).Results()
	r := store.KeptResult{ID: "r-1", Tenant: "acme", Principal: "alice", Tool: "mcp.docs.dump", Budget: 4000,
		CreatedAt: base, ExpiresAt: base.Add(time.Hour), Body: []byte(`{"text":"a\nb"}`)}
	must(t, kept.Put(ctx, r))
	if err := kept.Put(ctx, r); !errors.Is(err, store.ErrExists) {
		t.Fatalf("put twice: %v, want ErrExists", err)
	}
	got, err := kept.Get(ctx, "r-1", "acme", "alice", base.Add(time.Minute))
	must(t, err)
	if got.Tool != r.Tool || got.Budget != 4000 || string(got.Body) != string(r.Body) || !got.CreatedAt.Equal(base) || !got.ExpiresAt.Equal(r.ExpiresAt) {
		t.Fatalf("get: %+v", got)
	}
	// Only its tenant and principal read it, and only until it expires:
	// to anyone else it does not exist.
	for name, c := range map[string]struct {
		id, tenant, principal string
		now                   time.Time
	}{
		"another principal":       {"r-1", "acme", "bob", base},
		"another tenant":          {"r-1", "other", "alice", base},
		"no tenant":               {"r-1", "", "alice", base},
		"expired":                 {"r-1", "acme", "alice", base.Add(time.Hour)},
		"an id that was never":    {"r-2", "acme", "alice", base},
		"the principal as tenant": {"r-1", "alice", "acme", base},
	} {
		if _, err := kept.Get(ctx, c.id, c.tenant, c.principal, c.now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	must(t, kept.Put(ctx, store.KeptResult{ID: "r-old", Principal: "alice", Tool: "t", Budget: 1, CreatedAt: base.Add(-2 * time.Hour),
		ExpiresAt: base.Add(-time.Hour), Body: []byte(`{}`)}))
	n, err := kept.Prune(ctx, base)
	if err != nil || n != 1 {
		t.Fatalf("prune: %d, %v; want 1", n, err)
	}
	if _, err := kept.Get(ctx, "r-1", "acme", "alice", base); err != nil {
		t.Fatalf("a result not expired was pruned: %v", err)
	}
}
