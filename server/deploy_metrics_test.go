package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// promqlNames are the metric names a PromQL expression reads: its
// identifiers, less functions and aggregations (followed by "("),
// keywords, the labels of by/without/on/ignoring/group_* lists, and what
// stands in strings, label matchers and ranges.
func promqlNames(expr string) []string {
	strip := regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	expr = strip.ReplaceAllString(expr, `""`)
	expr = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`).ReplaceAllString(expr, " ")
	expr = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(expr, " ")
	keywords := []string{"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset", "inf", "nan"}
	var out []string
	ident := regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	for _, loc := range ident.FindAllStringIndex(expr, -1) {
		name := expr[loc[0]:loc[1]]
		if loc[0] > 0 && (expr[loc[0]-1] >= '0' && expr[loc[0]-1] <= '9' || expr[loc[0]-1] == '.') {
			continue // a number's exponent or a duration's unit
		}
		if rest := strings.TrimLeft(expr[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") || slices.Contains(keywords, strings.ToLower(name)) {
			continue
		}
		out = append(out, name)
	}
	return out
}

func TestPromQLNames(t *testing.T) {
	cases := map[string][]string{
		`sum by (le, source) (rate(legate_tool_call_duration_seconds_bucket{instance=~"$instance"}[$__rate_interval]))`: {"legate_tool_call_duration_seconds_bucket"},
		`max(a_total) / sum(b{outcome!~"ok|x"}[5m]) > 0.1 and on (job) c > 1e3`:                                         {"a_total", "b", "c"},
		`histogram_quantile(0.9, sum by (le) (rate(x_bucket[1h]))) == bool 2`:                                           {"x_bucket"},
	}
	for expr, want := range cases {
		if got := promqlNames(expr); !slices.Equal(got, want) {
			t.Errorf("promqlNames(%s) = %v, want %v", expr, got, want)
		}
	}
}

// deployedQueries are the PromQL expressions of the alert rules and the
// dashboard, and the metrics its variables list labels of.
func deployedQueries(t *testing.T) (exprs []string, names []string) {
	t.Helper()
	b, err := os.ReadFile("../deploy/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("alerts.yaml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("alerts.yaml: a rule without alert or expr: %+v", r)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	b, err = os.ReadFile("../deploy/grafana/legate.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("legate.json: %v", err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if m := regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)`).FindStringSubmatch(v.Definition); m != nil {
			names = append(names, m[1])
		}
	}
	for _, e := range exprs {
		names = append(names, promqlNames(e)...)
	}
	return exprs, names
}

// Every metric the alert rules and the dashboard read is served at
// /metrics by a running gateway that has had calls of each kind: an
// upstream's, a rate-limited one, a retried one and one held for approval.
func TestDeployedQueriesUseServedMetrics(t *testing.T) {
	exprs, names := deployedQueries(t)
	for _, want := range []string{"legate_tool_calls_total", "legate_upstream_circuit_state", "legate_approval_oldest_pending_seconds", "legate_audit_queued_rows", "legate_tool_call_duration_seconds_bucket"} {
		if !slices.Contains(names, want) {
			t.Errorf("the alerts and dashboard do not read %s (or their queries were not parsed): %v", want, names)
		}
	}
	if len(exprs) < 20 {
		t.Fatalf("%d queries found in the alerts and dashboard", len(exprs))
	}

	var hits atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable) // retried
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)
	upURL := upstreamtest.NewHTTP(t, upstreamtest.NewEchoServer("metrics"))
	gw := upGateway(t, `
upstreams:
  - id: up
    url: `+upURL+`
connectors:
  - id: hooks
    type: webhook
    config: {url: "`+hook.URL+`/in", allow_private_networks: true, max_attempts: 2}
  - id: held
    type: webhook
    config: {url: "`+hook.URL+`/held", allow_private_networks: true, max_attempts: 1}
limits:
  tools:
    - {match: "mcp.up.*", per_second: 0.001, burst: 1}
policy:
  rules:
    - {tool: "held.*", action: approve}
approvals: {wait: 10ms}
`, memStore(t), nil)
	waitCatalog(t, gw, "mcp.up.echo")
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"mcp.up.echo", `{"text":"a"}`}, {"mcp.up.echo", `{"text":"b"}`}, // the second is rate limited
		{"hooks.send", `{"payload":1}`}, // retried once
		{"held.send", `{"payload":2}`},  // held for approval
	} {
		if _, err := gw.Call(ctx, c.tool, json.RawMessage(c.args), server.CallOptions{}); err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
	}
	url := serve(t, gw)
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	served := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		served[line[:strings.IndexAny(line, "{ ")]] = true
	}
	for _, name := range names {
		if !served[name] {
			t.Errorf("the alerts or dashboard read %s, which /metrics does not serve", name)
		}
	}
}
