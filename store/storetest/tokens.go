package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testTokens(t *testing.T, open Opener) {
	ctx := context.Background()
	ts := open(t).Tokens()
	bob := store.Token{Name: "bob", Tenant: "acme", Role: "admin", Profile: "ops", Hash: "h-bob", CreatedAt: base}
	must(t, ts.Create(ctx, bob))
	must(t, ts.Create(ctx, store.Token{Name: "alice", Role: "user", Hash: "h-alice"}))
	dupName := bob
	dupName.Hash = "h-other"
	if err := ts.Create(ctx, dupName); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a name in use: %v, want ErrExists", err)
	}
	if err := ts.Create(ctx, store.Token{Name: "carol", Role: "user", Hash: "h-bob"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a hash in use: %v, want ErrExists", err)
	}

	got, err := ts.ByHash(ctx, "h-bob")
	if err != nil || got.Name != "bob" || got.Tenant != "acme" || got.Role != "admin" || got.Profile != "ops" || got.Hash != "h-bob" ||
		!got.CreatedAt.Equal(base) || !got.RevokedAt.IsZero() {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if got, err := ts.ByHash(ctx, "h-alice"); err != nil || got.CreatedAt.IsZero() {
		t.Fatalf("a token created without a time gets one: %+v %v", got, err)
	}
	if _, err := ts.ByHash(ctx, "h-nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown hash: %v, want ErrNotFound", err)
	}

	list, err := ts.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alice" || list[1].Name != "bob" {
		t.Fatalf("list, by name: %+v %v", list, err)
	}
	for _, tok := range list {
		if tok.Hash != "" {
			t.Fatalf("list shows a hash: %+v", tok)
		}
	}

	at := base.Add(time.Minute)
	must(t, ts.Revoke(ctx, "bob", at))
	if err := ts.Revoke(ctx, "bob", at.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second revoke: %v, want ErrConflict", err)
	}
	if err := ts.Revoke(ctx, "nobody", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoking an unknown name: %v, want ErrNotFound", err)
	}
	// A revoked token is still found, to be refused by name, and keeps its name.
	if got, err := ts.ByHash(ctx, "h-bob"); err != nil || !got.RevokedAt.Equal(at) {
		t.Fatalf("a revoked token by hash: %+v %v", got, err)
	}
	if err := ts.Create(ctx, dupName); !errors.Is(err, store.ErrExists) {
		t.Fatalf("reusing a revoked name: %v, want ErrExists", err)
	}
}
