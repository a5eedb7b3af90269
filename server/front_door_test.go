package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/authtest"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

// get sends method to url with the headers given (Host sets the Host) and
// returns the response's status.
func send(t *testing.T, method, url string, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range header {
		if k == "Host" {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestEveryOriginHeaderIsChecked(t *testing.T) {
	base := strings.TrimSuffix(serve(t, newGateway(t, testConfig)), "/mcp")
	for name, origins := range map[string][]string{
		"a loopback origin, then an evil one": {"http://localhost:6274", "https://evil.example"},
		"an evil origin, then a loopback one": {"https://evil.example", "http://localhost:6274"},
		"two origins in one header":           {"http://localhost:6274 https://evil.example"},
		"an origin with a path":               {"http://localhost:6274/x"},
		"null":                                {"null"},
	} {
		for _, path := range []string{"/mcp", "/admin/v1/approvals", "/healthz", "/readyz", "/metrics"} {
			if resp := send(t, "POST", base+path, http.Header{"Origin": origins}); resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s, %s: status %d, want 403", name, path, resp.StatusCode)
			}
		}
	}
	if resp := send(t, "POST", base+"/mcp", http.Header{"Origin": {"http://localhost:6274", "http://127.0.0.1:6274"}}); resp.StatusCode == http.StatusForbidden {
		t.Errorf("two loopback origins refused")
	}
}

func TestObservabilityEndpointsAreGuarded(t *testing.T) {
	base := strings.TrimSuffix(serve(t, newGateway(t, testConfig)), "/mcp")
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		for name, tc := range map[string]struct {
			header http.Header
			want   int
		}{
			"plain":       {nil, http.StatusOK},
			"evil host":   {http.Header{"Host": {"evil.example"}}, http.StatusForbidden},
			"evil origin": {http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		} {
			if resp := send(t, "GET", base+path, tc.header); resp.StatusCode != tc.want {
				t.Errorf("%s, %s: status %d, want %d", path, name, resp.StatusCode, tc.want)
			}
		}
	}
}

func TestMetricsNeedTheAdminRoleWithAuth(t *testing.T) {
	d := authtest.NewIDP(t)
	st := memStore(t)
	base := authServe(t, st, testConfig+d.Config(""))
	for name, tc := range map[string]struct {
		p    *auth.Principal
		want int
	}{
		"no token": {nil, http.StatusUnauthorized},
		"user":     {&auth.Principal{Name: "u", Role: auth.RoleUser}, http.StatusForbidden},
		"approver": {&auth.Principal{Name: "a", Role: auth.RoleApprover}, http.StatusForbidden},
		"admin":    {&auth.Principal{Name: "root", Role: auth.RoleAdmin}, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			if tc.p != nil {
				h.Set("Authorization", "Bearer "+token(t, st, *tc.p))
			}
			resp := send(t, "GET", base+"/metrics", h)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("no challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	// Probes and the public metadata need no token; the metadata is public
	// to any origin.
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp := send(t, "GET", base+path, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s without a token: %d", path, resp.StatusCode)
		}
	}
	if resp := send(t, "GET", base+auth.MetadataPath, http.Header{"Origin": {"https://evil.example"}}); resp.StatusCode != http.StatusOK {
		t.Errorf("metadata: %d", resp.StatusCode)
	}
}

// authServe serves a gateway of the config doc on st and returns its base URL.
func authServe(t *testing.T, st *sqlite.Store, doc string) string {
	t.Helper()
	cfg, err := config.Parse([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return strings.TrimSuffix(serve(t, gw), "/mcp")
}
