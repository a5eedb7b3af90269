package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/legate-mcp/legate/store"
)

func testConnectors(t *testing.T, open Opener) {
	ctx := context.Background()
	cs := open(t).Connectors()
	if list, err := cs.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty store lists %v, %v", list, err)
	}
	web := store.Connector{ID: "web", Type: "http", Config: []byte(`{"base_url":"http://127.0.0.1:1"}`),
		Credentials: []byte(`{"token":{"env":"T"}}`), CreatedAt: base,
		Access: []byte(`{"credentials_mode":"per_user","oauth":{"client_id":"app","client_secret":{"vault":"web.oauth.client_secret"},"scopes":["read"]}}`)}
	api := store.Connector{ID: "api", Type: "http", Config: []byte(`{}`), Credentials: []byte(`{}`), CreatedAt: base}
	must(t, cs.Create(ctx, web))
	must(t, cs.Create(ctx, api))
	dup := web
	dup.Type = "webhook"
	if err := cs.Create(ctx, dup); !errors.Is(err, store.ErrExists) {
		t.Fatalf("creating an id in use: %v, want ErrExists", err)
	}

	got, err := cs.Get(ctx, "web")
	must(t, err)
	if got.ID != "web" || got.Type != "http" || !sameJSON(got.Config, web.Config) || !sameJSON(got.Credentials, web.Credentials) || !sameJSON(got.Access, web.Access) || !got.CreatedAt.Equal(base) {
		t.Fatalf("get:\n got %+v\nwant %+v", got, web)
	}
	if _, err := cs.Get(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get unknown: %v, want ErrNotFound", err)
	}
	list, err := cs.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "api" || list[1].ID != "web" {
		t.Fatalf("list, by id: %+v %v", list, err)
	}
	if !sameJSON(list[1].Access, web.Access) || !sameJSON(list[0].Access, []byte(`{}`)) {
		t.Fatalf("list: access %s and %s, want %s and {}", list[1].Access, list[0].Access, web.Access)
	}

	must(t, cs.Create(ctx, store.Connector{ID: "now", Type: "http", Config: []byte(`{}`)}))
	if got, err := cs.Get(ctx, "now"); err != nil || got.CreatedAt.IsZero() {
		t.Fatalf("an instance created without a time gets one: %+v %v", got, err)
	}

	must(t, cs.Delete(ctx, "web"))
	if err := cs.Delete(ctx, "web"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := cs.Get(ctx, "web"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %v, want ErrNotFound", err)
	}
	must(t, cs.Create(ctx, web)) // a deleted id is free again
}
