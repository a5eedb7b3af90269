package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testUsers(t *testing.T, open Opener) {
	ctx := context.Background()
	us := open(t).Users()
	bob := store.User{Name: "bob", Tenant: "acme", Role: "admin", Profile: "ops", PasswordHash: "$argon2id$bob", CreatedAt: base}
	must(t, us.Create(ctx, bob))
	must(t, us.Create(ctx, store.User{Name: "alice", Role: "user", PasswordHash: "$argon2id$alice"}))
	if err := us.Create(ctx, bob); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a name in use: %v, want ErrExists", err)
	}
	got, err := us.Get(ctx, "bob")
	if err != nil || got != bob {
		t.Fatalf("get: %+v %v, want %+v", got, err, bob)
	}
	if _, err := us.Get(ctx, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown user: %v, want ErrNotFound", err)
	}
	must(t, us.SetPassword(ctx, "bob", "$argon2id$new"))
	must(t, us.SetDisabled(ctx, "bob", true))
	if got, _ := us.Get(ctx, "bob"); got.PasswordHash != "$argon2id$new" || !got.Disabled {
		t.Fatalf("after passwd and disable: %+v", got)
	}
	must(t, us.SetDisabled(ctx, "bob", false))
	if got, _ := us.Get(ctx, "bob"); got.Disabled {
		t.Fatalf("enabled again: %+v", got)
	}
	must(t, us.Update(ctx, store.User{Name: "alice", Tenant: "t2", Role: "approver", Profile: "p2", PasswordHash: "h2"}))
	if got, _ := us.Get(ctx, "alice"); got.Tenant != "t2" || got.Role != "approver" || got.Profile != "p2" || got.PasswordHash != "h2" || got.Disabled {
		t.Fatalf("after update: %+v", got)
	}
	if err := us.Update(ctx, store.User{Name: "nobody"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("updating an unknown user: %v, want ErrNotFound", err)
	}
	if err := us.SetPassword(ctx, "nobody", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("passwd of an unknown user: %v, want ErrNotFound", err)
	}
	if err := us.SetDisabled(ctx, "nobody", true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("disabling an unknown user: %v, want ErrNotFound", err)
	}
	list, err := us.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alice" || list[1].Name != "bob" || list[1].Tenant != "acme" {
		t.Fatalf("list, by name: %+v %v", list, err)
	}
	for _, u := range list {
		if u.PasswordHash != "" {
			t.Fatalf("list shows a password hash: %+v", u)
		}
	}
}

func testOAuthClients(t *testing.T, open Opener) {
	ctx := context.Background()
	os := open(t).OAuth()
	c := store.OAuthClient{ID: "c1", Name: "Claude", RedirectURIs: []string{"https://claude.ai/cb", "http://127.0.0.1:1234/cb"}, CreatedAt: base}
	must(t, os.CreateClient(ctx, c))
	if err := os.CreateClient(ctx, c); !errors.Is(err, store.ErrExists) {
		t.Fatalf("an id in use: %v, want ErrExists", err)
	}
	got, err := os.Client(ctx, "c1")
	if err != nil || got.Name != "Claude" || !slices.Equal(got.RedirectURIs, c.RedirectURIs) || !got.CreatedAt.Equal(base) || !got.LastUsedAt.IsZero() || got.SecretHash != "" {
		t.Fatalf("client: %+v %v", got, err)
	}
	if _, err := os.Client(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown client: %v, want ErrNotFound", err)
	}
	must(t, os.CreateClient(ctx, store.OAuthClient{ID: "c2", RedirectURIs: []string{"https://x/cb"}, SecretHash: "h", CreatedAt: base}))
	must(t, os.CreateClient(ctx, store.OAuthClient{ID: "c3", RedirectURIs: []string{"https://x/cb"}, CreatedAt: base.Add(time.Hour)}))
	must(t, os.TouchClient(ctx, "c2", base.Add(time.Minute)))
	if got, _ := os.Client(ctx, "c2"); !got.LastUsedAt.Equal(base.Add(time.Minute)) || got.SecretHash != "h" {
		t.Fatalf("touched client: %+v", got)
	}
	if n, err := os.CountClients(ctx); err != nil || n != 3 {
		t.Fatalf("count: %d %v", n, err)
	}
	// c1 was never used and is old: deleted; c2 was used; c3 is recent.
	if n, err := os.DeleteUnusedClients(ctx, base.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("delete unused: %d %v, want 1", n, err)
	}
	if _, err := os.Client(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unused client survived: %v", err)
	}
}

func testOAuthRequests(t *testing.T, open Opener) {
	ctx := context.Background()
	os := open(t).OAuth()
	r := store.OAuthRequest{ID: "r1", ClientID: "c1", Data: []byte(`{"a":1}`), ExpiresAt: base.Add(time.Minute)}
	must(t, os.PutRequest(ctx, r))
	got, err := os.Request(ctx, "r1", base)
	if err != nil || got.ClientID != "c1" || string(got.Data) != `{"a":1}` || got.CodeHash != "" || !got.ExpiresAt.Equal(r.ExpiresAt) {
		t.Fatalf("request: %+v %v", got, err)
	}
	if _, err := os.RequestByCode(ctx, "", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a request without a code is found by the empty code: %v", err)
	}
	if err := os.IssueCode(ctx, "r0", "code-hash", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a code for an unknown request: %v, want ErrNotFound", err)
	}
	must(t, os.IssueCode(ctx, "r1", "code-hash", base))
	if err := os.IssueCode(ctx, "r1", "other-hash", base); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second code: %v, want ErrConflict", err)
	}
	// Putting the request again (a page storing its progress) keeps the code.
	r.Data = []byte(`{"a":2}`)
	must(t, os.PutRequest(ctx, r))
	if got, err := os.RequestByCode(ctx, "code-hash", base); err != nil || got.ID != "r1" || string(got.Data) != `{"a":2}` {
		t.Fatalf("by code: %+v %v", got, err)
	}
	if _, err := os.RequestByCode(ctx, "code-hash", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a code taken twice: %v, want ErrNotFound", err)
	}
	if got, err := os.Request(ctx, "r1", base); err != nil || got.CodeHash != store.SpentCode {
		t.Fatalf("the request after its code was taken: %+v %v", got, err)
	}
	if err := os.IssueCode(ctx, "r1", "code-hash-2", base); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a code after the first was spent: %v, want ErrConflict", err)
	}
	if _, err := os.RequestByCode(ctx, store.SpentCode, base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a spent code's mark taken as a code: %v, want ErrNotFound", err)
	}
	r.ID = "r2"
	must(t, os.PutRequest(ctx, r))
	must(t, os.IssueCode(ctx, "r2", "code-hash", base))
	if err := os.IssueCode(ctx, "r2", "code-hash", base.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a code for an expired request: %v, want ErrNotFound", err)
	}
	if _, err := os.Request(ctx, "r1", base.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired request: %v, want ErrNotFound", err)
	}
	if _, err := os.RequestByCode(ctx, "code-hash", base.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired request by code: %v, want ErrNotFound", err)
	}
	must(t, os.DeleteRequest(ctx, "r1"))
	must(t, os.DeleteRequest(ctx, "r1"))
	if _, err := os.Request(ctx, "r1", base); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted request: %v, want ErrNotFound", err)
	}
}

func testOAuthTokens(t *testing.T, open Opener) {
	ctx := context.Background()
	os := open(t).OAuth()
	rt := store.OAuthToken{ID: "rt1", Kind: store.OAuthRefresh, Hash: "h1", Family: "f1", ClientID: "c1", Principal: "bob",
		Scopes: []string{"mcp", "offline_access"}, Audience: []string{"https://legate.example/mcp"}, AuthTime: base, CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
	at := store.OAuthToken{ID: "at1", Kind: store.OAuthAccess, Family: "f1", ClientID: "c1", Principal: "bob", CreatedAt: base, ExpiresAt: base.Add(time.Minute)}
	must(t, os.CreateToken(ctx, rt))
	must(t, os.CreateToken(ctx, at))
	must(t, os.CreateToken(ctx, store.OAuthToken{ID: "at2", Kind: store.OAuthAccess, Family: "f2", CreatedAt: base, ExpiresAt: base.Add(time.Minute)}))
	if err := os.CreateToken(ctx, rt); !errors.Is(err, store.ErrExists) {
		t.Fatalf("an id in use: %v, want ErrExists", err)
	}
	dupHash := rt
	dupHash.ID = "rt-other"
	if err := os.CreateToken(ctx, dupHash); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a hash in use: %v, want ErrExists", err)
	}
	got, err := os.TokenByHash(ctx, "h1")
	if err != nil || got.ID != "rt1" || got.Family != "f1" || got.Principal != "bob" || !slices.Equal(got.Scopes, rt.Scopes) ||
		!slices.Equal(got.Audience, rt.Audience) || !got.AuthTime.Equal(base) || !got.ExpiresAt.Equal(rt.ExpiresAt) || !got.RotatedAt.IsZero() {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if got, err := os.Token(ctx, "at1"); err != nil || got.Kind != store.OAuthAccess || got.Hash != "" {
		t.Fatalf("access token by id: %+v %v", got, err)
	}
	if _, err := os.TokenByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown hash: %v, want ErrNotFound", err)
	}

	// Rotation happens once; the successor is stored with it.
	next := store.OAuthToken{ID: "rt2", Kind: store.OAuthRefresh, Hash: "h2", Family: "f1", ClientID: "c1", Principal: "bob", CreatedAt: base.Add(time.Second), ExpiresAt: base.Add(time.Hour)}
	must(t, os.Rotate(ctx, "rt1", base.Add(time.Second), next))
	if err := os.Rotate(ctx, "rt1", base.Add(2*time.Second), store.OAuthToken{ID: "rt3", Kind: store.OAuthRefresh, Hash: "h3", Family: "f1"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second rotation: %v, want ErrConflict", err)
	}
	if _, err := os.Token(ctx, "rt3"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused rotation stored its successor: %v", err)
	}
	if got, _ := os.TokenByHash(ctx, "h1"); !got.RotatedAt.Equal(base.Add(time.Second)) {
		t.Fatalf("rotated token: %+v", got)
	}
	list, err := os.RefreshTokens(ctx, base)
	if err != nil || len(list) != 1 || list[0].ID != "rt2" || list[0].Hash != "" {
		t.Fatalf("live refresh tokens: %+v %v", list, err)
	}
	if list, _ := os.RefreshTokens(ctx, base.Add(2*time.Hour)); len(list) != 0 {
		t.Fatalf("expired tokens listed: %+v", list)
	}

	n, err := os.RevokeFamily(ctx, "f1", base.Add(time.Minute))
	if err != nil || n != 3 {
		t.Fatalf("revoke family: %d %v, want 3", n, err)
	}
	if n, _ := os.RevokeFamily(ctx, "f1", base.Add(time.Hour)); n != 0 {
		t.Fatalf("revoked twice: %d", n)
	}
	if got, _ := os.Token(ctx, "at1"); !got.RevokedAt.Equal(base.Add(time.Minute)) {
		t.Fatalf("access token of a revoked family: %+v", got)
	}
	if got, _ := os.Token(ctx, "at2"); !got.RevokedAt.IsZero() {
		t.Fatalf("another family revoked: %+v", got)
	}
	if err := os.Rotate(ctx, "rt2", base.Add(time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("rotating a revoked token: %v, want ErrConflict", err)
	}
	if list, _ := os.RefreshTokens(ctx, base); len(list) != 0 {
		t.Fatalf("revoked tokens listed: %+v", list)
	}

	// Expired tokens go; at1 and rt1 expired at base+1m and base+1h.
	if n, err := os.DeleteExpired(ctx, base.Add(30*time.Minute)); err != nil || n != 2 {
		t.Fatalf("delete expired: %d %v, want the two access tokens", n, err)
	}
	if _, err := os.Token(ctx, "at1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an expired token survived: %v", err)
	}
	if _, err := os.Token(ctx, "rt2"); err != nil {
		t.Fatalf("a live token was deleted: %v", err)
	}
	must(t, os.PutRequest(ctx, store.OAuthRequest{ID: "old", Data: []byte("{}"), ExpiresAt: base}))
	if n, err := os.DeleteExpired(ctx, base.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("delete an expired request: %d %v", n, err)
	}

	if _, err := os.SigningKey(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no key yet: %v, want ErrNotFound", err)
	}
	must(t, os.PutSigningKey(ctx, []byte("k1")))
	if err := os.PutSigningKey(ctx, []byte("k2")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second key: %v, want ErrExists", err)
	}
	if k, err := os.SigningKey(ctx); err != nil || string(k) != "k1" {
		t.Fatalf("key: %q %v", k, err)
	}
	must(t, os.DeleteSigningKey(ctx))
	if _, err := os.SigningKey(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a deleted key: %v, want ErrNotFound", err)
	}
	must(t, os.DeleteSigningKey(ctx))
	must(t, os.PutSigningKey(ctx, []byte("k3")))
}
