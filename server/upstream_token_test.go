package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// An upstream added through the admin API carries a static token from the
// vault: without the secret it is refused, naming the reference; once the
// secret is set it connects with it, the stored definition holds only the
// reference, and the token is masked in what the upstream returns.
func TestUpstreamTokenFromVaultThroughAdminAPI(t *testing.T) {
	const secret = "up-s3cret-9f8e7d6c5b4a"
	var served atomic.Int64
	mcpHandler := upstreamtest.Handler(upstreamtest.NewEchoServer("guarded"))
	up := upstreamtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		served.Add(1)
		mcpHandler.ServeHTTP(w, r)
	}))
	g := servertest.Start(t, "upstreams: []\n", servertest.With(func(o *server.Options) {
		o.AdminToken, o.StoreWatchInterval = "root-token", 20*time.Millisecond
	}))
	base := g.URL + "/admin/v1"
	def := fmt.Sprintf(`{"id":"guarded","url":%q,"token":{"vault":"guarded-token"}}`, up.URL())

	status, body := adminCall(t, base, "root-token", "POST", "/upstreams?connect=true", def)
	if status != http.StatusBadGateway || !strings.Contains(body, "token (vault:guarded-token)") || !strings.Contains(body, "not set") {
		t.Fatalf("added with no secret in the vault: %d %s, want 502 naming token (vault:guarded-token) as not set", status, body)
	}
	if served.Load() != 0 {
		t.Errorf("the upstream served %d requests before the token was set", served.Load())
	}

	// The failed add removed it from the store; the server drops it too.
	waitFor(t, "the upstream not added to be gone", func() bool { _, ok := g.GW.Upstreams().Upstream("guarded"); return !ok })

	if _, err := g.Vault.Set(context.Background(), "", "guarded-token", []byte(secret)); err != nil {
		t.Fatal(err)
	}
	status, body = adminCall(t, base, "root-token", "POST", "/upstreams?connect=true", def)
	if status != http.StatusCreated || !strings.Contains(body, `"tools": 1`) {
		t.Fatalf("added with the secret in the vault: %d %s", status, body)
	}
	recs, err := g.Store.Upstreams().List(context.Background())
	if err != nil || len(recs) != 1 {
		t.Fatalf("stored upstreams: %v %+v", err, recs)
	}
	if d := string(recs[0].Definition); strings.Contains(d, secret) || !strings.Contains(d, `"vault":"guarded-token"`) {
		t.Errorf("stored definition %s: want the reference, never the value", d)
	}
	waitFor(t, "the upstream's tool", func() bool { return listed(g.GW, "mcp.guarded.echo") })

	res, err := g.GW.Call(context.Background(), "mcp.guarded.echo", json.RawMessage(`{"text":"the token is `+secret+`"}`),
		server.CallOptions{Caller: connectors.Caller{Principal: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res)
	if res.IsError || !strings.Contains(string(out), "the token is") || strings.Contains(string(out), secret) {
		t.Errorf("echo through the upstream: %s; want the text with the token masked", out)
	}
	if strings.Contains(g.Logs.String(), secret) {
		t.Error("the token was logged")
	}
}
