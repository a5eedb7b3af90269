package sqlite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func TestSecretsStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ss := st.Secrets()
	row := func(tenant, name string, version int, key string) store.Secret {
		return store.Secret{Tenant: tenant, Name: name, Version: version, KeyID: key, WrappedKey: []byte("w-" + key), Ciphertext: []byte("c")}
	}
	for _, r := range []store.Secret{row("", "a", 1, "k1"), row("", "a", 2, "k1"), row("t", "a", 1, "k2"), row("", "b", 1, "k2")} {
		if err := ss.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.Create(ctx, row("", "a", 2, "k1")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate version: %v", err)
	}
	if got, err := ss.Get(ctx, "", "a", 0); err != nil || got.Version != 2 || string(got.Ciphertext) != "c" || got.CreatedAt.IsZero() {
		t.Fatalf("newest: %+v %v", got, err)
	}
	if got, err := ss.Get(ctx, "", "a", 1); err != nil || got.Version != 1 {
		t.Fatalf("version 1: %+v %v", got, err)
	}
	if _, err := ss.Get(ctx, "x", "a", 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other tenant: %v", err)
	}
	list, err := ss.List(ctx)
	if err != nil || len(list) != 4 || list[0].Name != "a" || list[3].Tenant != "t" || list[0].Ciphertext != nil {
		t.Fatalf("list: %+v %v", list, err)
	}
	if u, err := ss.KeyUsage(ctx); err != nil || u["k1"] != 2 || u["k2"] != 2 {
		t.Fatalf("usage: %v %v", u, err)
	}
	todo, err := ss.NotWrappedBy(ctx, "k2", 10)
	if err != nil || len(todo) != 2 || todo[0].KeyID != "k1" || todo[0].Ciphertext != nil {
		t.Fatalf("not wrapped by k2: %+v %v", todo, err)
	}
	// The second change is stale (the row no longer holds what was read).
	stale := todo[1]
	stale.WrappedKey = []byte("other")
	n, err := ss.Rewrap(ctx, []store.SecretRewrap{
		{Old: todo[0], KeyID: "k2", WrappedKey: []byte("new")},
		{Old: stale, KeyID: "k2", WrappedKey: []byte("new")},
	})
	if err != nil || n != 1 {
		t.Fatalf("rewrap: %d %v", n, err)
	}
	if u, _ := ss.KeyUsage(ctx); u["k1"] != 1 || u["k2"] != 3 {
		t.Fatalf("usage after rewrap: %v", u)
	}
	if n, err := ss.Delete(ctx, "", "a"); err != nil || n != 2 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if _, err := ss.Delete(ctx, "", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
