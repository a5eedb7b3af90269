package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	_ "github.com/legate-mcp/legate/connectors/github"
)

// throttlingGitHub throttles its first list of issues (429), then answers
// with two; it names each answer by a request id and opens issues.
type throttlingGitHub struct{ lists, creates atomic.Int32 }

func (g *throttlingGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-GitHub-Request-Id", "D0C5:1F2E:3A4B")
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/repos/acme/api/issues"):
		if g.lists.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"message":"You have exceeded a secondary rate limit"}`))
			return
		}
		w.Write([]byte(`[{"number":1,"title":"a","state":"open","user":{"login":"octo"}},{"number":2,"title":"b","state":"open","user":{"login":"octo"}}]`))
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/repos/acme/api/issues"):
		g.creates.Add(1)
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"number":3,"title":"new","state":"open","user":{"login":"octo"}}`))
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message":"Not Found"}`))
	}
}

// A native call's trace tells its attempts, the provider's request id,
// the items of a list and the reference of the credential used (never its
// value); the metrics count the provider's throttling and a retried write
// answered with its first outcome instead of being made again.
func TestTraceAndMetricsOfANativeCall(t *testing.T) {
	rc := newOTLPReceiver(t)
	gh := &throttlingGitHub{}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	t.Setenv("TRACED_GITHUB_TOKEN", "ghp_traced_secret_value")
	gw, closeGW := tracedGateway(t, rc, memStore(t), allowAll+`connectors:
  - {id: gh, type: github, config: {base_url: "`+srv.URL+`/", allow_private_networks: true, retry_backoff: 1ms}, credentials: {token: {env: TRACED_GITHUB_TOKEN}}}
`, true)
	url := serve(t, gw)
	c := mcp.NewClient(&mcp.Implementation{Name: "traced-client", Version: "1"}, nil)
	hc := &http.Client{Transport: headerClient{"Traceparent", "00-" + callerTrace + "-" + callerSpan + "-01"}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gh__list_issues", Arguments: map[string]any{"repo": "acme/api"}})
	if err != nil || res.IsError {
		t.Fatalf("list: %v %+v", err, res)
	}
	create := &mcp.CallToolParams{Name: "gh__create_issue", Arguments: map[string]any{"repo": "acme/api", "title": "new"}, Meta: mcp.Meta{legate.IdempotencyMetaKey: "client-key-1"}}
	for range 2 { // the client's retry with its key: the first outcome
		if res, err := cs.CallTool(context.Background(), create); err != nil || res.IsError {
			t.Fatalf("create: %v %+v", err, res)
		}
	}
	if n := gh.creates.Load(); n != 1 {
		t.Fatalf("the provider opened %d issues, want 1", n)
	}
	if got := metric(t, url, `legate_provider_throttled_total{tool="gh.list_issues"}`); got != 1 {
		t.Errorf("legate_provider_throttled_total = %v, want 1", got)
	}
	if got := metric(t, url, `legate_duplicate_writes_prevented_total{instance="gh"}`); got != 1 {
		t.Errorf("legate_duplicate_writes_prevented_total = %v, want 1", got)
	}
	cs.Close()
	closeGW()

	spans := rc.named("tools/call gh.list_issues")
	if len(spans) != 1 {
		t.Fatalf("%d spans of the list", len(spans))
	}
	exec := rc.child(t, spans[0], "execute")
	if a := attr(exec, "legate.attempts"); a != "2" {
		t.Errorf("legate.attempts = %q, want 2 (one throttled)", a)
	}
	if a := attr(exec, "legate.credential.token"); a != "env:TRACED_GITHUB_TOKEN" {
		t.Errorf("legate.credential.token = %q, want the reference", a)
	}
	items := ""
	for _, a := range exec.Attributes {
		if a.Key == "legate.items" {
			items = a.Value.String()
		}
	}
	if !strings.Contains(items, "2") {
		t.Errorf("legate.items = %q, want 2", items)
	}
	var ids []string
	for _, s := range rc.named("HTTP GET") {
		ids = append(ids, attr(s, "legate.provider_request_id"))
	}
	if len(ids) != 2 || ids[0] != "D0C5:1F2E:3A4B" || ids[1] != "D0C5:1F2E:3A4B" {
		t.Errorf("the provider's request ids on the HTTP spans: %q", ids)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, s := range rc.spans {
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.String(), "ghp_traced_secret_value") {
				t.Errorf("span %s holds the credential's value in %s", s.Name, a.Key)
			}
		}
	}
}
