package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// adminStatus asks the server at url (its /mcp endpoint) for its status
// with token; the answer's HTTP status and, on 200, its body.
func adminStatus(t *testing.T, url, token string) (int, *admin.Status) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/admin/v1/status", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	var s admin.Status
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, &s
}

func upstreamOf(s *admin.Status, id string) admin.UpstreamStatus {
	for _, u := range s.Upstreams {
		if u.ID == id {
			return u
		}
	}
	return admin.UpstreamStatus{}
}

// Done-when 3: the admin API's status shows a circuit opened by a failing
// upstream within 1 s of it opening, with what the store does not hold:
// the listen address, sessions, quarantined tools.
func TestStatusShowsLiveCircuit(t *testing.T) {
	const token = "status-admin-token"
	failing, failingSrv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("flaky"))
	held := upstreamtest.NewHTTP(t, upstreamtest.NewEchoServer("held"))
	cfg, err := config.Parse([]byte(allowAll+fmt.Sprintf(`
upstreams:
  - {id: flaky, url: %q}
  - {id: held, url: %q, pin: strict}
`, failingSrv.URL(), held)), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t), AdminToken: token, Version: "v9.9.9-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	waitCatalog(t, gw, "mcp.flaky.echo")
	url := serve(t, gw)
	cs, _ := upClient(t, url)

	if code, _ := adminStatus(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("without the admin token: %d, want 401", code)
	}
	_, s := adminStatus(t, url, token)
	if s == nil {
		t.Fatal("no status with the admin token")
	}
	if s.Version != "v9.9.9-test" || !strings.Contains(url, s.Listen) || s.Sessions != 1 || !s.Ready {
		t.Errorf("status: version %q listen %q sessions %d ready %v (served at %s, one client)", s.Version, s.Listen, s.Sessions, s.Ready, url)
	}
	if f := upstreamOf(s, "flaky"); f.Circuit != "closed" || f.Tools != 1 {
		t.Errorf("healthy upstream: %+v", f)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		_, s := adminStatus(t, url, token)
		return slices.Contains(upstreamOf(s, "held").Quarantined, "echo")
	}, "held's tool never shown quarantined (pin: strict)")

	failing.Set(upstreamtest.Status500)
	t.Cleanup(func() { failing.Set(upstreamtest.Healthy) })
	for i := 0; upStatus(t, gw, "flaky").Circuit != "open"; i++ {
		if i > 10 {
			t.Fatalf("circuit %s after %d failures", upStatus(t, gw, "flaky").Circuit, i)
		}
		callText(t, cs, wire("mcp.flaky.echo"), "x")
	}
	opened := time.Now()
	for {
		_, s := adminStatus(t, url, token)
		f := upstreamOf(s, "flaky")
		if f.Circuit == "open" {
			// The failed calls' error, newer than the last refresh's.
			if !strings.Contains(f.LastError, "500") {
				t.Errorf("last error not the failed call's: %+v", f)
			}
			break
		}
		if time.Since(opened) > time.Second {
			t.Fatalf("status shows circuit %q 1 s after it opened", f.Circuit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With authentication on, the status names every tenant's upstreams and
// connectors: it needs the admin role, as /metrics does.
func TestStatusNeedsTheAdminRole(t *testing.T) {
	_, st, url := authGateway(t)
	for name, tc := range map[string]struct {
		p    auth.Principal
		want int
	}{
		"user":     {auth.Principal{Name: "u", Role: auth.RoleUser}, http.StatusForbidden},
		"approver": {auth.Principal{Name: "a", Role: auth.RoleApprover}, http.StatusForbidden},
		"admin":    {auth.Principal{Name: "root", Role: auth.RoleAdmin}, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			code, s := adminStatus(t, url, token(t, st, tc.p))
			if code != tc.want {
				t.Fatalf("status %d, want %d", code, tc.want)
			}
			if s != nil && len(s.Connectors) == 0 {
				t.Errorf("no connectors in %+v", s)
			}
		})
	}
	if code, _ := adminStatus(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d", code)
	}
}
