package panel_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/panel"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
)

// fakeAPI answers the admin API requests the pages make, with answers.
func fakeAPI(answers map[string]any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/admin/v1/me" {
			json.NewEncoder(w).Encode(map[string]string{"name": "root", "role": "admin"})
			return
		}
		if a, ok := answers[r.URL.Path]; ok {
			json.NewEncoder(w).Encode(a)
			return
		}
		w.Write([]byte(`{}`))
	})
}

// page logs in to a panel over api and returns the page at path.
func page(t *testing.T, api http.Handler, path string) string {
	t.Helper()
	ts := httptest.NewServer(panel.New(api, &panel.Options{Loopback: true}))
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	servertest.PanelLogin(t, c, ts.URL, "tok").Body.Close()
	resp, err := c.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", path, resp.Status, b)
	}
	return string(b)
}

// The audit table shows every latency in one unit, milliseconds.
func TestAuditLatenciesInOneUnit(t *testing.T) {
	rows := []store.AuditRow{
		{ID: 1, Tool: "a.fast", Latency: 850 * time.Microsecond},
		{ID: 2, Tool: "a.mid", Latency: 12345678 * time.Nanosecond},
		{ID: 3, Tool: "a.slow", Latency: 2500 * time.Millisecond},
		{ID: 4, Tool: "admin.tokens.create"},
	}
	got := page(t, fakeAPI(map[string]any{"/admin/v1/audit": map[string]any{"rows": rows}}), "/audit")
	cells := regexp.MustCompile(`<td class="num">([^<]*)</td>`).FindAllStringSubmatch(got, -1)
	var latencies []string
	for _, c := range cells {
		latencies = append(latencies, c[1])
	}
	// Newest first.
	if want := []string{"-", "2500 ms", "12.3 ms", "0.85 ms"}; strings.Join(latencies, "|") != strings.Join(want, "|") {
		t.Errorf("latencies %q, want %q", latencies, want)
	}
}

// JSON is shown indented, in a <pre> that scrolls rather than breaks a
// line inside a word; a call's JSON result too, and prose wraps between words.
func TestJSONIsIndentedAndNotBrokenMidWord(t *testing.T) {
	result := `{"items":[{"title":"a rather long title that would wrap","url":"https://example.com/a/very/long/path/that/goes/on"}]}`
	record, _ := json.Marshal(map[string]any{"calls": []map[string]any{
		{"turn": 1, "tool": "web.fetch", "arguments": map[string]any{"url": "https://example.com"}, "result": result},
		{"turn": 2, "tool": "notes.say", "arguments": map[string]any{}, "result": "plain words of prose"},
	}})
	got := html.UnescapeString(page(t, fakeAPI(map[string]any{
		"/admin/v1/agent/runs/r1": map[string]any{"id": "r1", "record": json.RawMessage(record)},
		"/admin/v1/agent/runs":    map[string]any{"runs": []any{}},
	}), "/agent?id=r1"))
	if !strings.Contains(got, "<pre>{\n  \"items\": [\n    {\n      \"title\": \"a rather long title that would wrap\",") {
		t.Errorf("the call's JSON result is not indented:\n%s", got)
	}
	if !strings.Contains(got, `<pre class="text">plain words of prose</pre>`) {
		t.Errorf("a prose result is not marked as text:\n%s", got)
	}

	css := page(t, fakeAPI(nil), "/static/panel.css")
	rule := regexp.MustCompile(`(?m)^pre \{([^}]*)\}`).FindStringSubmatch(css)
	if rule == nil || strings.Contains(rule[1], "break-all") || strings.Contains(rule[1], "pre-wrap") || !strings.Contains(rule[1], "white-space: pre;") || !strings.Contains(rule[1], "overflow: auto") {
		t.Errorf("the rule of pre breaks lines (inside words) instead of scrolling: %q", rule)
	}
	if strings.Contains(css, "break-all") || strings.Contains(css, "overflow-wrap: anywhere") {
		t.Error("panel.css breaks words anywhere")
	}
}

// The panel's page views, reads of the admin API, are not audited; its
// changes are.
func TestAuditKeepsChangesNotReads(t *testing.T) {
	var kept []string
	audit := panel.Audit(func(r store.AuditRow) { kept = append(kept, r.Tool) })
	audit(store.AuditRow{Tool: "admin.approvals.list", Class: "read"})
	audit(store.AuditRow{Tool: "admin.approvals.approve", Class: "write"})
	audit(store.AuditRow{Tool: "admin.connectors.remove", Class: "destructive"})
	if strings.Join(kept, ",") != "admin.approvals.approve,admin.connectors.remove" {
		t.Errorf("audited %q", kept)
	}
}

// The skills page lists each skill with its state and source and a button
// that turns it the other way, and shows the agent's prompt as the API
// gives it.
func TestSkillsPage(t *testing.T) {
	got := html.UnescapeString(page(t, fakeAPI(map[string]any{"/admin/v1/skills": map[string]any{
		"skills": []map[string]any{
			{"name": "deploy", "description": "Use when deploying the site.", "enabled": true, "source": "/src/deploy"},
			{"name": "triage", "description": "Use when sorting new issues.", "enabled": false, "source": "https://git.example.com/s.git", "commit": "0123456789abcdef0123", "warning": "too short"},
		},
		"agent_prompt": "You are Legate's agent.\n\nSkills on this machine:\n- deploy: Use when deploying the site.",
	}}), "/skills"))
	for _, want := range []string{
		`<tr id="skill-deploy">`, `<td class="enabled">yes</td>`, `/src/deploy`, `action="/skills/deploy/disable"`, `id="disable-deploy"`,
		`<tr id="skill-triage">`, `<td class="enabled">no</td>`, `https://git.example.com/s.git <code>0123456789ab</code>`, `action="/skills/triage/enable"`, `id="enable-triage"`,
		"warning: too short", `<form method="post" action="/skills" class="grid" id="install-skill">`,
		"<pre id=\"agent-prompt\" class=\"text\">You are Legate's agent.\n\nSkills on this machine:\n- deploy: Use when deploying the site.</pre>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the skills page lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, `name="csrf"`); n < 3 {
		t.Errorf("%d forms carry the CSRF token, want every one of the 3", n)
	}
}

// The budgets page shows each budget's use against its limit, and says so
// when none was used.
func TestBudgetsPage(t *testing.T) {
	resets := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	got := page(t, fakeAPI(map[string]any{"/admin/v1/budgets": map[string]any{"budgets": []quota.Usage{
		{Scope: "principal", Tenant: "acme", Principal: "alice", Budget: "calls", Used: 150, Limit: 200, ResetsAt: resets},
		{Scope: "tenant", Tenant: "acme", Budget: "writes", Used: 3, Limit: 3, ResetsAt: resets},
	}}}), "/budgets")
	for _, want := range []string{"<td>alice</td><td>calls</td>", `<td class="num">150</td><td class="num">200</td><td class="num">75%</td>`,
		`<td class="num">100%</td><td>2026-12-02 18:00:00Z</td>`} {
		if !strings.Contains(got, want) {
			t.Errorf("the budgets page lacks %s:\n%s", want, got)
		}
	}
	if got := page(t, fakeAPI(map[string]any{"/admin/v1/budgets": map[string]any{"budgets": nil}}), "/budgets"); !strings.Contains(got, "No budget was used") {
		t.Errorf("an empty budgets page: %s", got)
	}
}
