package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
)

// freeAddr is a 127.0.0.1 address nothing listens on, a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// With metrics.listen, a scraper without a token reads the series there,
// while /metrics on listen still asks for an admin token; the metrics
// listener answers loopback Host names only, as /mcp's does on loopback.
func TestMetricsListenServesTheSeriesWithoutAToken(t *testing.T) {
	addr := freeAddr(t)
	g := servertest.Start(t, "auth: {tokens: true}\nmetrics: {listen: \""+addr+"\"}\n")
	// ServeHTTP binds metrics.listen as it starts, after Start returns.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics.listen %s never took a connection: %v", addr, err)
		}
	}
	get := func(url, host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://"+addr+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "legate_catalog_tools") {
		t.Errorf("GET /metrics on metrics.listen without a token: %d\n%s", code, body)
	}
	if code, _ := get(g.URL+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics on listen without a token: %d, want 401", code)
	}
	if code, _ := get("http://"+addr+"/mcp", ""); code != http.StatusNotFound {
		t.Errorf("GET /mcp on metrics.listen: %d, want 404", code)
	}
	if code, _ := get("http://"+addr+"/metrics", "attacker.example:80"); code != http.StatusForbidden {
		t.Errorf("GET /metrics on loopback with Host attacker.example: %d, want 403", code)
	}
}

// A metrics.listen address that cannot be bound fails the start.
func TestMetricsListenInUseFailsTheStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg, err := config.Parse([]byte("metrics: {listen: \""+taken.Addr().String()+"\"}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := gw.ServeHTTP(context.Background(), ln); err == nil || !strings.Contains(err.Error(), "metrics: listening on") {
		t.Fatalf("ServeHTTP with metrics.listen taken: %v", err)
	}
}
