package audit_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/audit"
)

func get(t *testing.T, method, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The listener of metrics.listen serves GET /metrics without credentials,
// and nothing else; the guard it is given sees the address bound.
func TestServeServesMetricsAlone(t *testing.T) {
	m := audit.NewMetrics(&sources{})
	m.Calls.WithLabelValues("a.b", "native:a", "ok").Inc()
	var guarded string
	guard := func(listen string, next http.Handler) http.Handler {
		guarded = listen
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Origin") != "" {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	addr, stop, err := m.Serve(context.Background(), "127.0.0.1:0", &audit.ServeOptions{Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	if addr == "" || addr == "127.0.0.1:0" || guarded != addr {
		t.Fatalf("bound %q, guard given %q: want the port bound", addr, guarded)
	}
	base := "http://" + addr
	code, body := get(t, http.MethodGet, base+"/metrics", nil)
	if code != http.StatusOK || !strings.Contains(body, `legate_tool_calls_total{outcome="ok",source="native:a",tool="a.b"} 1`) {
		t.Errorf("GET /metrics: %d\n%s", code, body)
	}
	for name, c := range map[string]struct {
		method, path string
		header       http.Header
		want         int
	}{
		"another path":  {http.MethodGet, "/mcp", nil, http.StatusNotFound},
		"the probes":    {http.MethodGet, "/healthz", nil, http.StatusNotFound},
		"the admin API": {http.MethodGet, "/admin/v1/approvals", nil, http.StatusNotFound},
		"a POST":        {http.MethodPost, "/metrics", nil, http.StatusMethodNotAllowed},
		"the guard":     {http.MethodGet, "/metrics", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
	} {
		if code, body := get(t, c.method, base+c.path, c.header); code != c.want {
			t.Errorf("%s: %s %s: %d, want %d\n%s", name, c.method, c.path, code, c.want, body)
		}
	}
	stop()
	if _, err := http.Get(base + "/metrics"); err == nil {
		t.Errorf("the listener still answers after stop")
	}
}

func TestServeWithoutAddressServesNothing(t *testing.T) {
	addr, stop, err := audit.NewMetrics(&sources{}).Serve(context.Background(), "", nil)
	if err != nil || addr != "" {
		t.Fatalf("Serve(\"\") = %q, %v", addr, err)
	}
	stop()
}

func TestServeReportsAnAddressInUse(t *testing.T) {
	m := audit.NewMetrics(&sources{})
	addr, stop, err := m.Serve(context.Background(), "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, _, err := m.Serve(context.Background(), addr, nil); err == nil || !strings.Contains(err.Error(), "metrics: listening on "+addr) {
		t.Fatalf("a second listener on %s: %v", addr, err)
	}
}
