package auth_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
)

// TestRequirePinned: on a hardened deployment only pinned principals
// change anything; reads stay open; with no pin nobody changes anything.
func TestRequirePinned(t *testing.T) {
	ts := tokenStore(t)
	ctx := context.Background()
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		tok, err := auth.CreateToken(ctx, ts, auth.Principal{Name: name, Role: auth.RoleAdmin})
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "done") })
	for _, c := range []struct {
		doc, who, method string
		want             int
		msg              string
	}{
		{"auth: {tokens: true, hardened: true, pins: [alice]}", "alice", "POST", 200, ""},
		{"auth: {tokens: true, hardened: true, pins: [alice]}", "bob", "POST", 403, `principal "bob" is not pinned`},
		{"auth: {tokens: true, hardened: true, pins: [alice]}", "bob", "DELETE", 403, `auth: {pins: ["bob"]}`},
		{"auth: {tokens: true, hardened: true, pins: [alice]}", "bob", "GET", 200, ""},
		{"auth: {tokens: true, hardened: true}", "alice", "POST", 403, `principal "alice" is not pinned`},
		{"auth: {tokens: true}", "bob", "POST", 200, ""},
	} {
		a := newAuth(t, c.doc, ts)
		h := a.Middleware()(a.RequirePinned(ok))
		req := httptest.NewRequest(c.method, "http://127.0.0.1/admin/v1/upstreams", nil)
		req.Header.Set("Authorization", "Bearer "+tokens[c.who])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want || !strings.Contains(rec.Body.String(), c.msg) {
			t.Errorf("%s, %s %s: %d %q, want %d with %q", c.doc, c.who, c.method, rec.Code, rec.Body, c.want, c.msg)
		}
	}
}
