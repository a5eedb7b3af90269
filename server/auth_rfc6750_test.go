package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

func TestWrongAdminTokenIsNamedInTheChallenge(t *testing.T) {
	cfg, err := config.Parse([]byte(testConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t), AdminToken: "right"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	base := strings.TrimSuffix(serve(t, g), "/mcp") + "/admin/v1/approvals"
	for name, tc := range map[string]struct{ auth, want string }{
		"none":  {"", `Bearer realm="legate-admin"`},
		"wrong": {"Bearer wrong", `Bearer realm="legate-admin", error="invalid_token"`},
	} {
		h := http.Header{}
		if tc.auth != "" {
			h.Set("Authorization", tc.auth)
		}
		resp := send(t, "GET", base, h)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != tc.want {
			t.Errorf("%s: status %d, WWW-Authenticate %q, want %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.want)
		}
	}
}
