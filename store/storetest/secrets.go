package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/legate-mcp/legate/store"
)

func secretRow(tenant, name string, version int, key string) store.Secret {
	return store.Secret{Tenant: tenant, Name: name, Version: version, KeyID: key, WrappedKey: []byte("w-" + key), Ciphertext: []byte("c-" + name), CreatedAt: base}
}

func testSecrets(t *testing.T, open Opener) {
	ctx := context.Background()
	ss := open(t).Secrets()
	for _, r := range []store.Secret{secretRow("", "a", 1, "k1"), secretRow("", "a", 2, "k1"), secretRow("t", "a", 1, "k2"), secretRow("", "b", 1, "k2")} {
		must(t, ss.Create(ctx, r))
	}
	if err := ss.Create(ctx, secretRow("", "a", 2, "k2")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a version in use: %v, want ErrExists", err)
	}

	got, err := ss.Get(ctx, "", "a", 0)
	if err != nil || got.Version != 2 || got.KeyID != "k1" || string(got.WrappedKey) != "w-k1" || string(got.Ciphertext) != "c-a" || !got.CreatedAt.Equal(base) {
		t.Fatalf("the newest version: %+v %v", got, err)
	}
	if got, err := ss.Get(ctx, "", "a", 1); err != nil || got.Version != 1 {
		t.Fatalf("version 1: %+v %v", got, err)
	}
	if got, err := ss.Get(ctx, "t", "a", 0); err != nil || got.Version != 1 || got.KeyID != "k2" {
		t.Fatalf("the tenant's own: %+v %v", got, err)
	}
	for name, key := range map[string]struct {
		tenant, name string
		version      int
	}{
		"another tenant":  {"x", "a", 0},
		"unknown version": {"", "a", 3},
		"unknown name":    {"", "c", 0},
	} {
		if _, err := ss.Get(ctx, key.tenant, key.name, key.version); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: %v, want ErrNotFound", name, err)
		}
	}

	list, err := ss.List(ctx)
	must(t, err)
	var order []string
	for _, r := range list {
		order = append(order, fmt.Sprintf("%s/%s/%d", r.Tenant, r.Name, r.Version))
		if r.Ciphertext != nil || r.WrappedKey != nil {
			t.Fatalf("list shows key material: %+v", r)
		}
	}
	if want := []string{"/a/1", "/a/2", "/b/1", "t/a/1"}; !slices.Equal(order, want) {
		t.Fatalf("list order %q, want %q (tenant, name, version)", order, want)
	}

	if u, err := ss.KeyUsage(ctx); err != nil || len(u) != 2 || u["k1"] != 2 || u["k2"] != 2 {
		t.Fatalf("usage: %v %v", u, err)
	}
	rewrap(t, ss)

	// Versions before one go, that one and later stay, in this tenant only.
	must(t, ss.Create(ctx, secretRow("", "a", 3, "k2")))
	if n, err := ss.DeleteBefore(ctx, "", "a", 3); err != nil || n != 2 {
		t.Fatalf("delete before 3: %d %v, want 2", n, err)
	}
	if n, err := ss.DeleteBefore(ctx, "", "a", 3); err != nil || n != 0 {
		t.Fatalf("delete before 3 again: %d %v, want 0", n, err)
	}
	if _, err := ss.Get(ctx, "", "a", 3); err != nil {
		t.Fatalf("version 3 after deleting those before it: %v", err)
	}
	if _, err := ss.Get(ctx, "t", "a", 1); err != nil {
		t.Fatalf("another tenant's version 1 after deleting this tenant's: %v", err)
	}
	if n, err := ss.Delete(ctx, "", "a"); err != nil || n != 1 {
		t.Fatalf("delete: %d %v, want 2", n, err)
	}
	if _, err := ss.Delete(ctx, "", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := ss.Get(ctx, "t", "a", 0); err != nil {
		t.Fatalf("another tenant's secret of the same name is kept: %v", err)
	}
}

// rewrap moves every version to k2, a change applying only to a row still
// as read.
func rewrap(t *testing.T, ss store.SecretStore) {
	ctx := context.Background()
	todo, err := ss.NotWrappedBy(ctx, "k2", 10)
	must(t, err)
	if len(todo) != 2 || todo[0].Name != "a" || todo[0].Version != 1 || todo[1].Version != 2 || string(todo[0].WrappedKey) != "w-k1" || todo[0].Ciphertext != nil {
		t.Fatalf("not wrapped by k2: %+v", todo)
	}
	if few, err := ss.NotWrappedBy(ctx, "k2", 1); err != nil || len(few) != 1 || few[0].Version != 1 {
		t.Fatalf("limited to 1: %+v %v", few, err)
	}
	stale := todo[1]
	stale.WrappedKey = []byte("read before another rotation")
	n, err := ss.Rewrap(ctx, []store.SecretRewrap{
		{Old: todo[0], KeyID: "k2", WrappedKey: []byte("new")},
		{Old: stale, KeyID: "k2", WrappedKey: []byte("new")},
	})
	if err != nil || n != 1 {
		t.Fatalf("rewrap: %d %v, want 1 (the stale change skipped)", n, err)
	}
	if u, _ := ss.KeyUsage(ctx); u["k1"] != 1 || u["k2"] != 3 {
		t.Fatalf("usage after rewrap: %v", u)
	}
	if got, err := ss.Get(ctx, "", "a", 1); err != nil || got.KeyID != "k2" || string(got.WrappedKey) != "new" || string(got.Ciphertext) != "c-a" {
		t.Fatalf("re-wrapped version: %+v %v", got, err)
	}
}
