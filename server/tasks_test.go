package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/tasks"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
	"github.com/legate-mcp/legate/vault"
)

// statelessClient speaks protocol 2026-07-28 over plain HTTP to url as the
// bearer of token, declaring the tasks extension in each request's _meta
// when withTasks is set.
type statelessClient struct {
	url, token string
	withTasks  bool
	elicits    bool // declares elicitation
	n          int
}

// rpcAnswer is one JSON-RPC response as a stateless client reads it.
type rpcAnswer struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends method with params (their _meta added) and the headers
// SEP-2243 asks for, name being Mcp-Name's value ("" for none).
func (c *statelessClient) call(t *testing.T, method, name string, params map[string]any) rpcAnswer {
	t.Helper()
	caps := map[string]any{}
	if c.withTasks {
		caps["extensions"] = map[string]any{tasks.Extension: map[string]any{}}
	}
	if c.elicits {
		caps["elicitation"] = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}
	c.n++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.n, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := rpcAnswer{status: resp.StatusCode}
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, `"id"`) {
				raw = []byte(data)
			}
		}
	} else {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		raw = b.Bytes()
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: HTTP %d, not a JSON-RPC response: %s", method, resp.StatusCode, raw)
	}
	return out
}

func (c *statelessClient) callTool(t *testing.T, args map[string]any) rpcAnswer {
	t.Helper()
	return c.call(t, "tools/call", "mcp__raw__post", map[string]any{"name": "mcp__raw__post", "arguments": args})
}

func (c *statelessClient) task(t *testing.T, method, id string) rpcAnswer {
	t.Helper()
	return c.call(t, method, id, map[string]any{"taskId": id})
}

// tasksGateway serves a gateway whose policy holds every call of upstream
// raw's tool post for approval, with tokens for alice and bob.
func tasksGateway(t *testing.T) (g *gatewayUnderTest, alice, bob string) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`)
	gw := servertest.Start(t, fmt.Sprintf(`auth: {tokens: true}
approvals: {wait: 200ms}
upstreams:
  - {id: raw, url: %q}
policy:
  rules:
    - {upstream: raw, action: approve}
`, srv.URL()))
	g = &gatewayUnderTest{raw: raw, gw: gw}
	alice = gw.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser})
	bob = gw.Token(t, auth.Principal{Name: "bob", Role: auth.RoleUser})
	upstreamtest.Eventually(t, 10*time.Second, func() bool { _, ok := gw.GW.Catalog().Lookup("mcp.raw.post"); return ok }, "the upstream's tool in the catalog")
	return g, alice, bob
}

// pending is the one pending approval request of the gateway's store.
func (g *gatewayUnderTest) pending(t *testing.T) *store.Approval {
	t.Helper()
	list, err := g.gw.Store.Approvals().List(context.Background(), store.ApprovalFilter{State: store.StatePending})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %d, %v; want 1", len(list), err)
	}
	return list[0]
}

// waitStatus polls tasks/get until the task leaves working.
func waitStatus(t *testing.T, c *statelessClient, id string) rpcAnswer {
	t.Helper()
	var got rpcAnswer
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		got = c.task(t, "tasks/get", id)
		return got.Error != nil || got.Result["status"] != tasks.Working
	}, "task %s leaving working", id)
	return got
}

// TestHeldCallAsTask: a 2026-07-28 client that declares the tasks
// extension gets a call held for approval as a task, which tasks/get
// follows to the tool's result once approved (the tool run once), to
// failed once denied, and which tasks/cancel withdraws; the task is its
// caller's alone. A client without the extension is answered as before.
func TestHeldCallAsTask(t *testing.T) {
	g, alice, bob := tasksGateway(t)
	url := g.gw.URL + "/mcp"
	a := &statelessClient{url: url, token: alice, withTasks: true}
	b := &statelessClient{url: url, token: bob, withTasks: true}

	// Approved: the task completes with the tool's result, run once.
	created := a.callTool(t, map[string]any{"n": 1})
	if created.Error != nil || created.Result["resultType"] != "task" || created.Result["status"] != tasks.Working {
		t.Fatalf("a held call from a client of the tasks extension: %+v; want a CreateTaskResult, working", created)
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if created.Result[k] == nil {
			t.Errorf("CreateTaskResult lacks %s: %v", k, created.Result)
		}
	}
	id, _ := created.Result["taskId"].(string)
	if got := a.task(t, "tasks/get", id); got.Result["status"] != tasks.Working || got.Result["resultType"] != "complete" {
		t.Fatalf("tasks/get of a pending task: %+v; want working", got)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if got := b.task(t, m, id); got.Error == nil || got.Error.Code != -32602 {
			t.Errorf("%s of alice's task by bob: %+v; want -32602 (no such task)", m, got)
		}
	}
	ap := g.pending(t)
	if g.raw.Calls.Load() != 0 {
		t.Fatal("the tool ran before approval")
	}
	if _, err := g.gw.GW.Decide(context.Background(), ap.ID, true, "carol", "fine"); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, a, id)
	res, _ := done.Result["result"].(map[string]any)
	if done.Result["status"] != tasks.Completed || res == nil || fmt.Sprint(res["content"]) != "[map[text:post type:text]]" {
		t.Fatalf("tasks/get once approved: %+v; want completed with the tool's result", done)
	}
	// The result inlined is the 2026-07-28 call's, as it would have been answered at once.
	if meta, _ := res["_meta"].(map[string]any); res["resultType"] != "complete" || meta["io.modelcontextprotocol/serverInfo"] == nil {
		t.Errorf("the completed task's result %v: want resultType complete and the server named in its _meta", res)
	}
	a.task(t, "tasks/get", id)
	if n := g.raw.Calls.Load(); n != 1 {
		t.Fatalf("the approved call ran %d times, want once", n)
	}

	// Denied: failed, with an error.
	id = a.callTool(t, map[string]any{"n": 2}).Result["taskId"].(string)
	if _, err := g.gw.GW.Decide(context.Background(), g.pending(t).ID, false, "carol", "no"); err != nil {
		t.Fatal(err)
	}
	if got := waitStatus(t, a, id); got.Result["status"] != tasks.Failed || got.Result["error"] == nil || got.Result["result"] != nil {
		t.Fatalf("tasks/get once denied: %+v; want failed with an error", got)
	}

	// Cancelled by its caller: the request is withdrawn, and cannot be approved.
	id = a.callTool(t, map[string]any{"n": 3}).Result["taskId"].(string)
	ap = g.pending(t)
	if got := a.task(t, "tasks/cancel", id); got.Error != nil || len(got.Result) != 1 || got.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %+v; want the empty ack", got)
	}
	if got := a.task(t, "tasks/get", id); got.Result["status"] != tasks.Cancelled {
		t.Fatalf("tasks/get once cancelled: %+v; want cancelled", got)
	}
	if _, err := g.gw.GW.Decide(context.Background(), ap.ID, true, "carol", "late"); err == nil {
		t.Fatal("a withdrawn request was approved")
	}
	if got := a.task(t, "tasks/cancel", id); got.Error != nil || got.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel of a cancelled task: %+v; want the same ack", got)
	}
	if n := g.raw.Calls.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want once (the approved call only)", n)
	}

	// Unknown and removed methods, unknown ids.
	if got := a.task(t, "tasks/get", "lgt1.ap_00.nope"); got.Error == nil || got.Error.Code != -32602 {
		t.Errorf("tasks/get of an unknown task: %+v; want -32602", got)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if got := a.task(t, m, id); got.Error == nil || got.Error.Code != -32601 {
			t.Errorf("%s: %+v; want -32601 (removed by SEP-2663)", m, got)
		}
	}

	// Without the extension: APPROVAL_PENDING as before, and no task methods.
	plain := &statelessClient{url: url, token: alice}
	got := plain.callTool(t, map[string]any{"n": 4})
	sc, _ := got.Result["structuredContent"].(map[string]any)
	if e, _ := sc["error"].(map[string]any); got.Result["resultType"] != "complete" || got.Result["isError"] != true || e["code"] != "APPROVAL_PENDING" || got.Result["taskId"] != nil {
		t.Fatalf("a held call from a client without the extension: %+v; want APPROVAL_PENDING", got)
	}
	if got := plain.task(t, "tasks/get", id); got.Error == nil || got.Error.Code != -32021 || got.status != http.StatusBadRequest {
		t.Errorf("tasks/get without the extension: %+v; want -32021, HTTP 400", got)
	}
}

// TestHeldCallAsTaskOfUpstreamPerClient: a held call the fast path cannot
// run (an upstream with a session per client) is a task all the same, run
// once approved; without the extension, or allowed, it takes the SDK's
// path as before.
func TestHeldCallAsTaskOfUpstreamPerClient(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`, `{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	gw := servertest.Start(t, fmt.Sprintf("auth: {tokens: true}\napprovals: {wait: 200ms}\nupstreams:\n  - {id: pc, url: %q, session: per_client}\n", srv.URL()))
	upstreamtest.Eventually(t, 10*time.Second, func() bool { _, ok := gw.GW.Catalog().Lookup("mcp.pc.post"); return ok }, "the upstream's tools in the catalog")
	c := &statelessClient{url: gw.URL + "/mcp", token: gw.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser}), withTasks: true}
	if got := c.call(t, "tools/call", "mcp__pc__look", map[string]any{"name": "mcp__pc__look", "arguments": map[string]any{}}); got.Result["resultType"] != "complete" || got.Result["isError"] == true {
		t.Fatalf("an allowed call: %+v; want its result", got)
	}
	created := c.call(t, "tools/call", "mcp__pc__post", map[string]any{"name": "mcp__pc__post", "arguments": map[string]any{"n": 1}})
	id, _ := created.Result["taskId"].(string)
	if created.Result["resultType"] != "task" || id == "" {
		t.Fatalf("a held call of a per_client upstream: %+v; want a task", created)
	}
	list, err := gw.Store.Approvals().List(context.Background(), store.ApprovalFilter{State: store.StatePending})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %d, %v", len(list), err)
	}
	if _, err := gw.GW.Decide(context.Background(), list[0].ID, true, "carol", "fine"); err != nil {
		t.Fatal(err)
	}
	if done := waitStatus(t, c, id); done.Result["status"] != tasks.Completed || done.Result["result"] == nil {
		t.Fatalf("tasks/get once approved: %+v; want completed with the result", done)
	}
	if n := raw.Calls.Load(); n != 2 {
		t.Fatalf("the upstream was called %d times, want twice (the allowed call, the approved one)", n)
	}
}

// TestTaskConfirmedInTheClient: under a rule with confirm: client, a
// client that can ask its user gets the task input_required, and answers
// it with tasks/update: approved, the call runs once; declined, it is
// denied.
func TestTaskConfirmedInTheClient(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`)
	gw := servertest.Start(t, fmt.Sprintf("auth: {tokens: true}\nupstreams:\n  - {id: raw, url: %q}\npolicy:\n  rules:\n    - {upstream: raw, action: approve, confirm: client}\n", srv.URL()))
	upstreamtest.Eventually(t, 10*time.Second, func() bool { _, ok := gw.GW.Catalog().Lookup("mcp.raw.post"); return ok }, "the upstream's tool in the catalog")
	c := &statelessClient{url: gw.URL + "/mcp", token: gw.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser}), withTasks: true, elicits: true}
	for i, answer := range []struct {
		approve bool
		want    string
	}{{true, tasks.Completed}, {false, tasks.Failed}} {
		id, _ := c.callTool(t, map[string]any{"n": i}).Result["taskId"].(string)
		got := c.task(t, "tasks/get", id)
		asks, _ := got.Result["inputRequests"].(map[string]any)
		if got.Result["status"] != tasks.InputRequired || asks[tasks.ConfirmKey] == nil {
			t.Fatalf("tasks/get: %+v; want input_required asking for %s", got, tasks.ConfirmKey)
		}
		upd := c.call(t, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{
			tasks.ConfirmKey: map[string]any{"action": "accept", "content": map[string]any{"approve": answer.approve}}}})
		if upd.Error != nil || upd.Result["resultType"] != "complete" {
			t.Fatalf("tasks/update: %+v; want the empty ack", upd)
		}
		if done := waitStatus(t, c, id); done.Result["status"] != answer.want {
			t.Fatalf("approve=%v: tasks/get %+v; want %s", answer.approve, done, answer.want)
		}
	}
	if n := raw.Calls.Load(); n != 1 {
		t.Fatalf("the upstream was called %d times, want once (the confirmed call)", n)
	}
}

// gatewayUnderTest is a served gateway and the upstream it holds calls of.
type gatewayUnderTest struct {
	raw *upstreamtest.Raw
	gw  *servertest.Gateway
}

// TestTaskAcrossReplicasAndRestart: a task made on replica A, which then
// stops, is approved and followed to its result on replica B, and on A
// once it starts again; the tool runs once. The replicas share a
// PostgreSQL store and their vault's key, as a scale-out does.
func TestTaskAcrossReplicasAndRestart(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`)
	doc := fmt.Sprintf("auth: {tokens: true}\napprovals: {wait: 200ms}\nupstreams:\n  - {id: raw, url: %q}\npolicy:\n  rules:\n    - {upstream: raw, action: approve}\n", srv.URL())
	sts := replicaStores(t, 3)
	key := filepath.Join(t.TempDir(), vault.KeyFileName)
	replica := func(st store.Store) (*server.Gateway, string) {
		cfg, err := config.Parse([]byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st, Vault: vault.New(st.Secrets(), vault.KeySource{File: key, Create: true}, nil)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gw.Close() })
		gw.Start(context.Background())
		waitCatalog(t, gw, "mcp.raw.post")
		return gw, serve(t, gw)
	}
	a, urlA := replica(sts[0])
	tok, err := auth.CreateToken(context.Background(), sts[0].Tokens(), auth.Principal{Name: "alice", Role: auth.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	created := (&statelessClient{url: urlA, token: tok, withTasks: true}).callTool(t, map[string]any{"n": 1})
	id, _ := created.Result["taskId"].(string)
	if id == "" {
		t.Fatalf("replica A: %+v; want a task", created)
	}
	a.Close() // A stops with the task pending

	b, urlB := replica(sts[1])
	onB := &statelessClient{url: urlB, token: tok, withTasks: true}
	if got := onB.task(t, "tasks/get", id); got.Result["status"] != tasks.Working {
		t.Fatalf("replica B: tasks/get of A's task: %+v; want working", got)
	}
	list, err := sts[1].Approvals().List(context.Background(), store.ApprovalFilter{State: store.StatePending})
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %d, %v", len(list), err)
	}
	if _, err := b.Decide(context.Background(), list[0].ID, true, "carol", "fine"); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, onB, id)
	if done.Result["status"] != tasks.Completed || done.Result["result"] == nil {
		t.Fatalf("replica B: tasks/get once approved: %+v; want completed with the result", done)
	}
	_, urlA2 := replica(sts[2]) // A again, after its restart
	again := (&statelessClient{url: urlA2, token: tok, withTasks: true}).task(t, "tasks/get", id)
	if fmt.Sprint(again.Result) != fmt.Sprint(done.Result) {
		t.Errorf("restarted replica: %+v; want what B answered, %+v", again, done)
	}
	if n := raw.Calls.Load(); n != 1 {
		t.Fatalf("the approved call ran %d times, want once", n)
	}
}
