package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// Done-when 3: `legate status` shows a circuit opened by a failing
// upstream within 1 s of it opening (the store still says what the last
// refresh recorded).
func TestStatusShowsOpenCircuit(t *testing.T) {
	const token = "status-cli-token"
	srv, addr := openCircuitServer(t, token)
	opened := time.Now()
	out, err := runCLI(t, "status", "--url", srv+"/mcp", "--token", token, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var s admin.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(s.Upstreams) != 1 || s.Upstreams[0].Circuit != "open" || s.Version != "v1.2.3" || s.Listen != addr {
		t.Errorf("status: %s", out)
	}
	if el := time.Since(opened); el > time.Second {
		t.Errorf("status took %s after the circuit opened", el)
	}
	out, err = runCLI(t, "status", "--url", srv, "--token", token)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^flaky +streamable-http +open `).MatchString(out) || !strings.Contains(out, "legate v1.2.3 on "+addr) {
		t.Errorf("table:\n%s", out)
	}
	if !strings.Contains(out, "no connectors") {
		t.Errorf("no empty state for connectors:\n%s", out)
	}

	// A refused token is named with where it came from and what it is for.
	fix := ": set LEGATE_ADMIN_TOKEN to the token the server was started with (or, with authentication on, a token of the admin role), or pass --token"
	out, err = runCLI(t, "status", "--url", srv, "--token", "wrong")
	if want := "status: the server at " + srv + "/admin/v1/status refused the admin token from --token (401 "; err == nil ||
		!strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), fix) {
		t.Errorf("wrong token: %v\n%s\nwant %s…%s", err, out, want, fix)
	}
	t.Setenv("LEGATE_ADMIN_TOKEN", "wrong")
	out, err = runCLI(t, "status", "--url", srv)
	if err == nil || !strings.Contains(err.Error(), "refused the admin token from LEGATE_ADMIN_TOKEN (401 ") || !strings.HasSuffix(err.Error(), fix) {
		t.Errorf("wrong token from the environment: %v\n%s", err, out)
	}
	t.Setenv("LEGATE_ADMIN_TOKEN", "")
	out, err = runCLI(t, "status", "--url", srv)
	if err == nil || !strings.Contains(err.Error(), "asks for an admin token and none was sent (401 ") || !strings.HasSuffix(err.Error(), fix) {
		t.Errorf("no token: %v\n%s", err, out)
	}
}

// A server that cannot be reached is an error naming the URL asked.
func TestStatusNamesAnUnreachableURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out, err := runCLI(t, "status", "--url", "http://"+addr, "--timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), "cannot reach the server at http://"+addr+"/admin/v1/status") {
		t.Fatalf("got %v\n%s", err, out)
	}
}

// `upstream list` counts an upstream's quarantined tools: with pin: strict
// a cached tool no admin accepted yet is held back.
func TestUpstreamListShowsQuarantined(t *testing.T) {
	state := t.TempDir()
	cfgPath := writeConfig(t, `
upstreams:
  - {id: held, url: "http://127.0.0.1:1/mcp", pin: strict}
`)
	st, err := sqlite.Open(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	tools := []store.CachedTool{{Name: "echo", Definition: json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`), Hash: "h1"}}
	if err := st.Upstreams().SaveCache(context.Background(), "held", tools, nil, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	st.Close()
	out, err := runCLI(t, "upstream", "list", "--config", cfgPath, "--state-dir", state)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^ID +TRANSPORT +STATUS +TOOLS +QUARANTINED `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^held +streamable-http +ok +0 +1 `).MatchString(out) {
		t.Errorf("upstream list:\n%s", out)
	}
	out, err = runCLI(t, "upstream", "list", "-o", "json", "--config", cfgPath, "--state-dir", state)
	if err != nil || !strings.Contains(out, `"quarantined": 1`) {
		t.Errorf("upstream list --json: %v\n%s", err, out)
	}
}

// openCircuitServer serves a gateway with the admin token token and one
// upstream, flaky, that fails until its circuit opens; it returns the
// server's base URL and its address.
func openCircuitServer(t *testing.T, token string) (string, string) {
	t.Helper()
	failing, failingSrv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("flaky"))
	g := servertest.Start(t, fmt.Sprintf(`
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
upstreams:
  - {id: flaky, url: %q}
`, failingSrv.URL()), servertest.With(func(o *server.Options) { o.AdminToken, o.Version = token, "v1.2.3" }))
	gw := g.GW
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		_, ok := gw.Catalog().Lookup("mcp.flaky.echo")
		return ok
	}, "the upstream's tool never listed")

	circuit := func() string {
		all, err := gw.Upstreams().Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return all[0].Circuit
	}
	failing.Set(upstreamtest.Status500)
	t.Cleanup(func() { failing.Set(upstreamtest.Healthy) })
	for i := 0; circuit() != "open"; i++ {
		if i > 10 {
			t.Fatalf("circuit %s after %d failures", circuit(), i)
		}
		if _, err := gw.Call(context.Background(), "mcp.flaky.echo", json.RawMessage(`{"text":"x"}`), server.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return g.URL, strings.TrimPrefix(g.URL, "http://")
}

// `legate status` lists each profile with the URL that serves its view.
func TestStatusListsProfileURLs(t *testing.T) {
	const token = "status-profiles-token"
	g := servertest.Start(t, "profiles:\n  - {name: all}\n  - {name: coding, include: [\"code.*\"], for: [all]}\n",
		servertest.With(func(o *server.Options) { o.AdminToken = token }))
	out, err := runCLI(t, "status", "--url", g.URL, "--token", token)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	addr := strings.TrimPrefix(g.URL, "http://")
	if !regexp.MustCompile(`(?m)^coding +http://`+regexp.QuoteMeta(addr)+`/mcp/coding +all$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^all +http://`+regexp.QuoteMeta(addr)+`/mcp/all *$`).MatchString(out) {
		t.Errorf("no profile URLs in:\n%s", out)
	}
}
