package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func TestTokensStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := st.Tokens()
	bob := store.Token{Name: "bob", Tenant: "acme", Role: "admin", Profile: "ops", Hash: "h-bob"}
	for _, tok := range []store.Token{bob, {Name: "alice", Role: "user", Hash: "h-alice"}} {
		if err := ts.Create(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	dupName := bob
	dupName.Hash = "h-other"
	if err := ts.Create(ctx, dupName); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate name: %v", err)
	}
	if err := ts.Create(ctx, store.Token{Name: "carol", Role: "user", Hash: "h-bob"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate hash: %v", err)
	}

	got, err := ts.ByHash(ctx, "h-bob")
	if err != nil || got.Name != "bob" || got.Tenant != "acme" || got.Role != "admin" || got.Profile != "ops" || got.CreatedAt.IsZero() || !got.RevokedAt.IsZero() {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if _, err := ts.ByHash(ctx, "h-nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown hash: %v", err)
	}

	list, err := ts.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alice" || list[1].Name != "bob" {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, tok := range list {
		if tok.Hash != "" {
			t.Fatalf("list shows a hash: %+v", tok)
		}
	}

	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	if err := ts.Revoke(ctx, "bob", at); err != nil {
		t.Fatal(err)
	}
	if err := ts.Revoke(ctx, "bob", time.Now()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second revoke: %v", err)
	}
	if err := ts.Revoke(ctx, "nobody", time.Now()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
	if got, err := ts.ByHash(ctx, "h-bob"); err != nil || !got.RevokedAt.Equal(at) {
		t.Fatalf("revoked token by hash: %+v %v", got, err)
	}
	// A revoked token keeps its name.
	if err := ts.Create(ctx, dupName); !errors.Is(err, store.ErrExists) {
		t.Fatalf("reusing a revoked name: %v", err)
	}
}
