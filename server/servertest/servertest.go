// Package servertest serves a real Legate gateway for a test: a config
// document, an in-memory SQLite store, a vault under the test's temporary
// folder, the gateway started and served over HTTP on 127.0.0.1 as
// `legate serve` serves it, and everything stopped at the test's cleanup.
// Only tests import it.
//
//	g := servertest.Start(t, `
//	auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
//	connectors: [...]
//	`)
//	bearer := g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser})
//	// talk to g.URL + "/mcp" with bearer
package servertest

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/internal/syncbuf"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// URLVar is the name that `${URLVar}` in the config document expands to
// the gateway's base URL: a config that names the gateway's own address
// (auth.resource, say) is written before the port is known.
const URLVar = "GATEWAY_URL"

// Gateway is a gateway served for a test.
type Gateway struct {
	GW    *server.Gateway
	URL   string // http://127.0.0.1:port, without a final slash
	Store *sqlite.Store
	Vault *vault.Vault
	Logs  *syncbuf.Buffer // everything the gateway logged, from debug up (nothing if With replaced the logger)
}

// Option changes how Start builds the gateway.
type Option func(*settings)

type settings struct {
	lookup func(string) (string, bool)
	tweak  []func(*server.Options)
}

// Env makes config.Parse expand `${NAME}` through lookup instead of the
// process environment (`${GATEWAY_URL}` is expanded all the same).
func Env(lookup func(string) (string, bool)) Option {
	return func(s *settings) { s.lookup = lookup }
}

// With changes the server.Options the gateway is made with, after Start
// has filled in its config, store, vault and logger: an admin token, a
// panel address, a store watch interval.
func With(f func(*server.Options)) Option {
	return func(s *settings) { s.tweak = append(s.tweak, f) }
}

// Start serves a gateway for t on 127.0.0.1 from the config YAML, with an
// in-memory SQLite store and a vault whose key file is under t.TempDir();
// it is served by server.Gateway.ServeHTTP (the panel too when the options
// give it an address), and everything stops at t's cleanup.
func Start(t testing.TB, yaml string, opts ...Option) *Gateway {
	t.Helper()
	s := settings{lookup: os.LookupEnv}
	for _, o := range opts {
		o(&s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // closed already once served; not when Start fails before
	g := &Gateway{URL: "http://" + ln.Addr().String(), Logs: &syncbuf.Buffer{}}
	cfg, err := config.Parse([]byte(yaml), func(name string) (string, bool) {
		if name == URLVar {
			return g.URL, true
		}
		return s.lookup(name)
	})
	if err != nil {
		t.Fatalf("servertest: the config does not parse: %v", err)
	}
	g.Store, err = sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Store.Close() })
	g.Vault = vault.New(g.Store.Secrets(), vault.KeySource{File: filepath.Join(t.TempDir(), vault.KeyFileName), Create: true}, nil)
	so := server.Options{Config: cfg, Store: g.Store, Vault: g.Vault,
		Logger: slog.New(slog.NewTextHandler(g.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, f := range s.tweak {
		f(&so)
	}
	g.GW, err = server.New(ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.GW.Close() })
	g.GW.Start(ctx)
	served := make(chan error, 1)
	go func() { served <- g.GW.ServeHTTP(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("servertest: serving the gateway: %v", err)
		}
	})
	return g
}

// Token makes a bearer token for p in the gateway's store.
func (g *Gateway) Token(t testing.TB, p auth.Principal) string {
	t.Helper()
	tok, err := auth.CreateToken(context.Background(), g.Store.Tokens(), p)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// WaitSession waits until the admin API lists the MCP session id: the
// gateway's HTTP fast paths know it, so that its calls may take them. It
// needs auth on (it asks as an admin principal of its own). A stateless
// session, whose id is "", has nothing to wait for.
func (g *Gateway) WaitSession(t testing.TB, id string) {
	t.Helper()
	if id == "" {
		return
	}
	admin := g.Token(t, auth.Principal{Name: "ops-" + id, Role: auth.RoleAdmin})
	for range 500 {
		req, _ := http.NewRequest("GET", g.URL+"/admin/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(body), id) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session %s never listed", id)
}

// PanelLogin logs c (a client with a cookie jar) in to the panel at base
// with tok as a browser does: it opens the login page, then posts its
// form with the page's CSRF token. It returns the answer to the post,
// redirects followed as c follows them.
func PanelLogin(t testing.TB, c *http.Client, base, tok string) *http.Response {
	t.Helper()
	res, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("servertest: no CSRF token on the panel's login page (%s): %s", res.Status, page)
	}
	res, err = c.PostForm(base+"/login", url.Values{"token": {tok}, "csrf": {html.UnescapeString(string(m[1]))}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
