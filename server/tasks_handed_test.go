package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/tasks"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// TestUpstreamTaskHandedThrough: a gateway (the edge) whose upstream is
// another gateway (the team's) that holds calls for approval as tasks. A
// 2026-07-28 client of the edge that declares the tasks extension gets the
// team's task under an id of the edge's, follows it through the edge to the
// tool's result once the team approves (the edge's credential masked, the
// edge's provenance on it, its end audited once), and withdraws another;
// a task of another principal is unknown to it; a client without the
// extension is answered as before.
func TestUpstreamTaskHandedThrough(t *testing.T) {
	team, _, _ := tasksGateway(t)
	edgeToken := team.gw.Token(t, auth.Principal{Name: "edge", Role: auth.RoleUser})
	t.Setenv("LEGATE_TEST_TEAM_AUTH", "Bearer "+edgeToken)
	team.raw.HandleCall(func(name string, _ json.RawMessage) (json.RawMessage, error) {
		// A result that echoes the edge's credential for the team.
		return json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": name + " by " + edgeToken}}})
	})
	edge, canonical, wire := edgeOf(t, team.gw.URL)
	url := edge.URL + "/mcp"
	a := &statelessClient{url: url, token: edge.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser}), withTasks: true}
	b := &statelessClient{url: url, token: edge.Token(t, auth.Principal{Name: "bob", Role: auth.RoleUser}), withTasks: true}
	call := func(c *statelessClient, n int) rpcAnswer {
		return c.call(t, "tools/call", wire, map[string]any{"name": wire, "arguments": map[string]any{"n": n}})
	}

	created := call(a, 1)
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || created.Result["status"] != tasks.Working || !strings.HasPrefix(id, "lgu1.") {
		t.Fatalf("a call the team holds, from a client of the tasks extension: %+v; want the team's task under the edge's id", created)
	}
	ap := team.pending(t)
	if ap.Principal != "edge" {
		t.Errorf("the team's request is %s's, want the edge's", ap.Principal)
	}
	if text := fmt.Sprint(created.Result["content"]); !strings.Contains(text, id) || strings.Contains(text, "lgt1.") {
		t.Errorf("the created task's text %s: want it to name the edge's id alone", text)
	}
	if got := a.task(t, "tasks/get", id); got.Result["status"] != tasks.Working || got.Result["taskId"] != id {
		t.Fatalf("tasks/get through the edge: %+v; want working, under the edge's id", got)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if got := b.task(t, m, id); got.Error == nil || got.Error.Code != -32602 {
			t.Errorf("%s of alice's task by bob: %+v; want -32602 (no such task)", m, got)
		}
	}
	if got := a.task(t, "tasks/get", id[:len(id)-2]+"xx"); got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("tasks/get of a tampered id: %+v; want -32602", got)
	}

	if _, err := team.gw.GW.Decide(context.Background(), ap.ID, true, "carol", "fine"); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, a, id)
	res, _ := done.Result["result"].(map[string]any)
	text := fmt.Sprint(res["content"])
	meta, _ := res["_meta"].(map[string]any)
	if done.Result["status"] != tasks.Completed || done.Result["taskId"] != id || !strings.Contains(text, "post by") {
		t.Fatalf("tasks/get once the team approved: %+v; want completed with the tool's result", done)
	}
	if strings.Contains(text, edgeToken) || meta[provenance.MetaKey] == nil || res["resultType"] != "complete" {
		t.Errorf("the completed task's result %v: want the edge's credential masked, its provenance and resultType complete", res)
	}
	a.task(t, "tasks/get", id)
	var ends []store.AuditRow
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		rows, _ := edge.Store.Audit().Query(context.Background(), store.AuditQuery{Tool: canonical, Principal: "alice", Limit: 100})
		ends = ends[:0]
		for _, r := range rows {
			if r.Decision == tasks.DecisionEnd {
				ends = append(ends, r)
			}
		}
		return len(rows) >= 2
	}, "the edge's audit rows of the call")
	if len(ends) != 1 || ends[0].Outcome != "ok" || ends[0].Source != "upstream:team" {
		t.Errorf("audit rows of the task's end: %+v; want one, ok, from upstream team", ends)
	}

	// Withdrawn through the edge: the team's request is denied as its caller's cancel.
	id, _ = call(a, 2).Result["taskId"].(string)
	ap = team.pending(t)
	if got := a.task(t, "tasks/cancel", id); got.Error != nil || got.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel through the edge: %+v; want the ack", got)
	}
	if got := a.task(t, "tasks/get", id); got.Result["status"] != tasks.Cancelled {
		t.Fatalf("tasks/get once cancelled: %+v; want cancelled", got)
	}
	if _, err := team.gw.GW.Decide(context.Background(), ap.ID, true, "carol", "late"); err == nil {
		t.Fatal("a withdrawn request was approved")
	}
	if n := team.raw.Calls.Load(); n != 1 {
		t.Fatalf("the team's tool ran %d times, want once", n)
	}

	// Without the extension, the edge asks the team as before: APPROVAL_PENDING.
	got := call(&statelessClient{url: url, token: a.token}, 3)
	sc, _ := got.Result["structuredContent"].(map[string]any)
	if e, _ := sc["error"].(map[string]any); got.Result["taskId"] != nil || e["code"] != "APPROVAL_PENDING" {
		t.Fatalf("a client without the extension: %+v; want APPROVAL_PENDING", got)
	}
}

// TestUpstreamTaskConfirmedThroughTheEdge: under the team's confirm:
// client rule, the team's task asks the client's user through the edge
// (input_required), and the answer the client sends the edge by
// tasks/update reaches the team: the call runs once.
func TestUpstreamTaskConfirmedThroughTheEdge(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`)
	team := servertest.Start(t, fmt.Sprintf("auth: {tokens: true}\nupstreams:\n  - {id: raw, url: %q}\npolicy:\n  rules:\n    - {upstream: raw, action: approve, confirm: client}\n", srv.URL()))
	t.Setenv("LEGATE_TEST_TEAM_AUTH", "Bearer "+team.Token(t, auth.Principal{Name: "edge", Role: auth.RoleUser}))
	edge, _, wire := edgeOf(t, team.URL)
	c := &statelessClient{url: edge.URL + "/mcp", token: edge.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser}), withTasks: true, elicits: true}
	id, _ := c.call(t, "tools/call", wire, map[string]any{"name": wire, "arguments": map[string]any{}}).Result["taskId"].(string)
	got := c.task(t, "tasks/get", id)
	if asks, _ := got.Result["inputRequests"].(map[string]any); got.Result["status"] != tasks.InputRequired || asks[tasks.ConfirmKey] == nil || got.Result["taskId"] != id {
		t.Fatalf("tasks/get through the edge: %+v; want input_required asking for %s, under the edge's id", got, tasks.ConfirmKey)
	}
	upd := c.call(t, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{
		tasks.ConfirmKey: map[string]any{"action": "accept", "content": map[string]any{"approve": true}}}})
	if upd.Error != nil || upd.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update through the edge: %+v; want the ack", upd)
	}
	if done := waitStatus(t, c, id); done.Result["status"] != tasks.Completed || raw.Calls.Load() != 1 {
		t.Fatalf("tasks/get once confirmed: %+v, the tool ran %d times; want completed, once", done, raw.Calls.Load())
	}
}

// edgeOf serves the edge: a gateway whose one upstream, team, is the
// gateway at teamURL, spoken to at 2026-07-28 with the credential in
// LEGATE_TEST_TEAM_AUTH, and whose policy allows its calls. canonical and
// wire name the team's tool post.
func edgeOf(t *testing.T, teamURL string) (edge *servertest.Gateway, canonical, wire string) {
	edge = servertest.Start(t, fmt.Sprintf(`auth: {tokens: true}
upstreams:
  - {id: team, url: %q, protocol_version: 2026-07-28, header_env: {Authorization: LEGATE_TEST_TEAM_AUTH}}
policy:
  rules:
    - {upstream: team, action: allow}
`, teamURL+"/mcp"))
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		for _, e := range edge.GW.Catalog().Entries() {
			if strings.HasPrefix(e.Canonical, "mcp.team.") && strings.HasSuffix(e.Canonical, "post") {
				canonical, wire = e.Canonical, e.Wire
			}
		}
		return wire != ""
	}, "the team's tool in the edge's catalog")
	return edge, canonical, wire
}
