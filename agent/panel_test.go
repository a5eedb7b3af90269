package agent_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"

	"strings"
	"testing"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/panel"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
)

// The panel's agent page lists the runs and shows one with every call,
// through the admin API (GET /admin/v1/agent/runs[/{id}]), to admins only.
func TestPanelShowsTheAgentsHistory(t *testing.T) {
	h := newHarness(t, options{extra: "auth: {tokens: true}\npolicy:\n  defaults: {read: allow, draft: allow, write: allow, destructive: allow}\n"},
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_write", `{"path":"panel.txt","content":"p"}`)}},
		agenttest.Step{Text: "Wrote panel.txt for the panel."},
	)
	rec := h.run(agent.Request{Instruction: "Write panel.txt.", Principal: &auth.Principal{Name: "alice", Role: auth.RoleUser}})
	if rec.Stopped != agent.StoppedAnswered {
		t.Fatalf("run: %+v", rec)
	}
	ts := httptest.NewServer(panel.New(server.AdminHandler(h.gw, "127.0.0.1:0"), &panel.Options{Loopback: true}))
	t.Cleanup(ts.Close)
	get := func(role, path string) (int, string) {
		tok, err := auth.CreateToken(context.Background(), h.st.Tokens(), auth.Principal{Name: role + "-user", Role: role})
		if err != nil {
			t.Fatal(err)
		}
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		resp := servertest.PanelLogin(t, c, ts.URL, tok)
		resp.Body.Close()
		resp, err = c.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := get(auth.RoleAdmin, "/agent?id="+rec.ID)
	for _, want := range []string{rec.ID, "Write panel.txt.", "Wrote panel.txt for the panel.", "host__fs_write", "panel.txt", "alice", "answered"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the agent page (%d) lacks %q:\n%s", code, want, page)
		}
	}
	// An approver logs in to the panel but reads no history.
	if _, page := get(auth.RoleApprover, "/agent"); strings.Contains(page, rec.ID) || !strings.Contains(page, "admin") {
		t.Errorf("an approver's agent page:\n%s", page)
	}
}
