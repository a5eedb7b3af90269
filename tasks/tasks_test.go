package tasks_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/tasks"
	"github.com/legate-mcp/legate/upstream"
)

// approvals is an approval store of fixed requests, by id.
type approvals struct {
	store.ApprovalStore
	rows map[string]*store.Approval
}

func (s approvals) Get(_ context.Context, id string) (*store.Approval, error) {
	if a, ok := s.rows[id]; ok {
		return a, nil
	}
	return nil, store.ErrNotFound
}

var now = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

func request(id, state string) *store.Approval {
	return &store.Approval{ID: id, Principal: "alice", Tenant: "acme", Tool: "slack.post", State: state,
		CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour), Outcome: json.RawMessage(`{"content":[{"type":"text","text":"sent"}]}`)}
}

type decision struct {
	id, decider, tenant, reason string
	approve                     bool
}

func newTasks(rows ...*store.Approval) (*tasks.Tasks, *[]decision) {
	m := map[string]*store.Approval{}
	for _, a := range rows {
		m[a.ID] = a
	}
	var decided []decision
	t := tasks.New(approvals{rows: m}, tasks.Options{
		Key:       func(context.Context) []byte { return []byte("key") },
		Principal: "local",
		Now:       func() time.Time { return now },
		Decide: func(_ context.Context, id string, approve bool, decider, tenant, reason string) error {
			decided = append(decided, decision{id, decider, tenant, reason, approve})
			if a, ok := m[id]; ok {
				a.State, a.Decider, a.Reason = store.StateDenied, decider, reason
			}
			return nil
		},
	})
	return t, &decided
}

func TestStatusOfEachState(t *testing.T) {
	expired := request("ap_x", store.StatePending)
	expired.ExpiresAt = now.Add(-time.Second)
	withdrawn := request("ap_w", store.StateDenied)
	withdrawn.Decider, withdrawn.Reason = "alice (tasks/cancel)", tasks.CancelReason
	forged := request("ap_f", store.StateDenied)
	forged.Decider, forged.Reason = "carol", tasks.CancelReason // an approver's denial, whatever its reason
	for name, tc := range map[string]struct {
		a    *store.Approval
		want string
	}{
		"pending":           {request("ap_p", store.StatePending), tasks.Working},
		"pending, overdue":  {expired, tasks.Failed},
		"approved":          {request("ap_a", store.StateApproved), tasks.Working},
		"executing":         {request("ap_e", store.StateExecuting), tasks.Working},
		"executed":          {request("ap_d", store.StateExecuted), tasks.Completed},
		"failed (its run)":  {request("ap_r", store.StateFailed), tasks.Completed},
		"denied":            {request("ap_n", store.StateDenied), tasks.Failed},
		"expired":           {request("ap_y", store.StateExpired), tasks.Failed},
		"withdrawn":         {withdrawn, tasks.Cancelled},
		"denied, not by it": {forged, tasks.Failed},
	} {
		t.Run(name, func(t *testing.T) {
			if got, _ := tasks.Status(tc.a, now); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.a.State, got, tc.want)
			}
		})
	}
}

func TestTaskIsItsCallersAlone(t *testing.T) {
	a := request("ap_1", store.StatePending)
	ts, _ := newTasks(a)
	ctx := context.Background()
	id := ts.ID(ctx, a)
	if _, err := ts.Get(ctx, id, tasks.Caller{Principal: "alice", Tenant: "acme"}); err != nil {
		t.Fatalf("its caller: %v", err)
	}
	for name, probe := range map[string]struct {
		id string
		c  tasks.Caller
	}{
		"another principal":  {id, tasks.Caller{Principal: "bob", Tenant: "acme"}},
		"another tenant":     {id, tasks.Caller{Principal: "alice", Tenant: "evil"}},
		"the bare approval":  {"ap_1", tasks.Caller{Principal: "alice", Tenant: "acme"}},
		"a signature edited": {id[:len(id)-2] + "xx", tasks.Caller{Principal: "alice", Tenant: "acme"}},
		"an id re-pointed":   {strings.Replace(id, "ap_1", "ap_2", 1), tasks.Caller{Principal: "alice", Tenant: "acme"}},
	} {
		if _, err := ts.Get(ctx, probe.id, probe.c); !errors.Is(err, tasks.ErrUnknown) {
			t.Errorf("%s: %v, want ErrUnknown", name, err)
		}
	}
}

func TestCancel(t *testing.T) {
	pending, done := request("ap_p", store.StatePending), request("ap_d", store.StateExecuted)
	ts, decided := newTasks(pending, done)
	ctx := context.Background()
	alice := tasks.Caller{Principal: "alice", Tenant: "acme"}
	if err := ts.Cancel(ctx, ts.ID(ctx, done), alice); err != nil || len(*decided) != 0 {
		t.Fatalf("cancelling a completed task: %v, decisions %v; want none", err, *decided)
	}
	if err := ts.Cancel(ctx, ts.ID(ctx, pending), alice); err != nil {
		t.Fatal(err)
	}
	want := decision{"ap_p", "alice (tasks/cancel)", "acme", tasks.CancelReason, false}
	if len(*decided) != 1 || (*decided)[0] != want {
		t.Fatalf("decisions %v, want %v", *decided, want)
	}
	if got, _ := tasks.Status(pending, now); got != tasks.Cancelled {
		t.Errorf("withdrawn: %s, want cancelled", got)
	}
}

// post sends one stateless request to Serve and returns whether it
// answered, the HTTP status and the body.
func post(ts *tasks.Tasks, method string, headers map[string]string, params string) (bool, int, string) {
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	ok := ts.Serve(w, r)
	if !ok {
		rest, _ := io.ReadAll(r.Body)
		if !bytes.Equal(rest, []byte(body)) {
			return ok, 0, "the body was not left to read: " + string(rest)
		}
		return ok, 0, w.Body.String()
	}
	return ok, w.Code, w.Body.String()
}

func TestServe(t *testing.T) {
	a := request("ap_1", store.StatePending)
	a.Principal, a.Tenant = "local", ""
	ts, _ := newTasks(a)
	id := ts.ID(context.Background(), a)
	declared := `{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	for name, tc := range map[string]struct {
		method, params string
		headers        map[string]string
		status         int
		has            string
	}{
		"get":                    {"tasks/get", `{"taskId":"` + id + `","_meta":` + declared + `}`, nil, 200, `"status":"working"`},
		"cancel":                 {"tasks/cancel", `{"taskId":"` + id + `","_meta":` + declared + `}`, nil, 200, `"result":{"resultType":"complete"}`},
		"update":                 {"tasks/update", `{"taskId":"` + id + `","inputResponses":{},"_meta":` + declared + `}`, nil, 200, `"result":{"resultType":"complete"}`},
		"undeclared":             {"tasks/get", `{"taskId":"` + id + `","_meta":{}}`, nil, 400, `"code":-32021`},
		"unknown task":           {"tasks/get", `{"taskId":"lgt1.ap_9.x","_meta":` + declared + `}`, nil, 400, `"code":-32602`},
		"removed: tasks/result":  {"tasks/result", `{"taskId":"` + id + `","_meta":` + declared + `}`, nil, 404, `"code":-32601`},
		"removed: tasks/list":    {"tasks/list", `{"_meta":` + declared + `}`, nil, 404, `"code":-32601`},
		"Mcp-Name of another":    {"tasks/get", `{"taskId":"` + id + `","_meta":` + declared + `}`, map[string]string{"Mcp-Name": "other"}, 400, `"code":-32020`},
		"Mcp-Method of another":  {"tasks/get", `{"taskId":"` + id + `","_meta":` + declared + `}`, map[string]string{"Mcp-Method": "tasks/cancel"}, 400, `"code":-32020`},
		"Mcp-Name of this task":  {"tasks/get", `{"taskId":"` + id + `","_meta":` + declared + `}`, map[string]string{"Mcp-Name": " " + id + " "}, 200, `"status":"working"`},
		"a call, for the others": {"tools/call", `{"name":"x"}`, nil, 0, ""},
		"a session's request":    {"tasks/get", `{"taskId":"` + id + `"}`, map[string]string{"Mcp-Session-Id": "s1"}, 0, ""},
	} {
		t.Run(name, func(t *testing.T) {
			a := *a // each case on a request of its own: one cancels it
			ts, _ := newTasks(&a)
			ok, status, body := post(ts, tc.method, tc.headers, tc.params)
			if ok != (tc.status != 0) || status != tc.status || !strings.Contains(body, tc.has) {
				t.Errorf("answered %v, HTTP %d %s; want HTTP %d with %s", ok, status, body, tc.status, tc.has)
			}
		})
	}
}

func TestCreatedIsFlat(t *testing.T) {
	a := request("ap_1", store.StatePending)
	ts, _ := newTasks(a)
	var got map[string]any
	if err := json.Unmarshal(ts.Created(context.Background(), a), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs", "content"} {
		if _, ok := got[k]; !ok {
			t.Errorf("CreateTaskResult lacks %s: %v", k, got)
		}
	}
	for _, k := range []string{"task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval"} {
		if _, ok := got[k]; ok {
			t.Errorf("CreateTaskResult carries %s: %v", k, got)
		}
	}
	if got["resultType"] != "task" || got["ttlMs"] != float64(time.Hour.Milliseconds()+time.Minute.Milliseconds()) {
		t.Errorf("CreateTaskResult %v: want resultType task, ttlMs the request's life", got)
	}
}

func TestDeclared(t *testing.T) {
	for meta, want := range map[string]bool{
		`{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`:       true,
		`{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{}}}}`:          false,
		`{"io.modelcontextprotocol/clientCapabilities":{}}`:                                                        false,
		`{"io.modelcontextprotocol\/clientCapabilities":{"extensions":{"io.modelcontextprotocol\u002ftasks":{}}}}`: true,
		`{}`:   false,
		``:     false,
		`[1]`:  false,
		`null`: false,
	} {
		if got := tasks.Declared(json.RawMessage(meta)); got != want {
			t.Errorf("Declared(%s) = %v, want %v", meta, got, want)
		}
	}
}

// TestConfirmInTheClient: with confirm: client, a caller that declares
// elicitation decides its own request through the task: input_required
// with the question, answered by tasks/update.
func TestConfirmInTheClient(t *testing.T) {
	ctx := context.Background()
	alice := tasks.Caller{Principal: "alice", Tenant: "acme"}
	elicits := &rounds.Round{Meta: json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`)}
	create := func(ts *tasks.Tasks, a *store.Approval, r *rounds.Round, confirm string) map[string]any {
		raw, err := ts.Create(ctx, r, confirm, func(context.Context) (*store.Approval, error) { return a, nil })
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.Unmarshal(raw, &got)
		return got
	}
	a := request("ap_c", store.StatePending)
	ts, decided := newTasks(a)
	created := create(ts, a, elicits, "client")
	id, _ := created["taskId"].(string)
	if created["status"] != tasks.InputRequired || created["inputRequests"] != nil {
		t.Fatalf("CreateTaskResult %v: want input_required, its question on tasks/get only", created)
	}
	raw, err := ts.Get(ctx, id, alice)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status        string
		InputRequests map[string]struct{ Method string }
	}
	json.Unmarshal(raw, &got)
	if got.Status != tasks.InputRequired || got.InputRequests[tasks.ConfirmKey].Method != "elicitation/create" {
		t.Fatalf("tasks/get: %s; want input_required asking %s by elicitation/create", raw, tasks.ConfirmKey)
	}
	if err := ts.Update(ctx, id, alice, json.RawMessage(`{"other":{"action":"accept","content":{"approve":true}}}`)); err != nil || len(*decided) != 0 {
		t.Fatalf("an answer to no question: %v, decisions %v; want none", err, *decided)
	}
	if _, err := ts.Get(ctx, strings.Replace(id, "lgt1.c.", "lgt1.", 1), alice); !errors.Is(err, tasks.ErrUnknown) {
		t.Fatalf("the id with its mode taken off: %v, want ErrUnknown", err)
	}
	if err := ts.Update(ctx, id, alice, json.RawMessage(`{"approval":{"action":"accept","content":{"confirm":true}}}`)); err != nil {
		t.Fatal(err)
	}
	want := decision{"ap_c", "alice (in the client)", "acme", "answered in the client: accept", true}
	if len(*decided) != 1 || (*decided)[0] != want {
		t.Fatalf("decisions %v, want %v", *decided, want)
	}

	for name, tc := range map[string]struct {
		r       *rounds.Round
		confirm string
	}{
		"the inbox's rule":         {elicits, "inbox"},
		"a client that cannot ask": {&rounds.Round{Meta: json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{}}`)}, "client"},
	} {
		b := request("ap_i", store.StatePending)
		ts, _ := newTasks(b)
		if got := create(ts, b, tc.r, tc.confirm); got["status"] != tasks.Working {
			t.Errorf("%s: %v, want working (the inbox decides)", name, got)
		}
	}
}

// upstreams answers every request about an upstream's task with the task,
// working, and counts them.
type upstreams struct{ asked *int }

func (u upstreams) Request(_ context.Context, id string, c upstream.Client, method, name string, params json.RawMessage) (json.RawMessage, bool, error) {
	*u.asked++
	return json.RawMessage(`{"resultType":"complete","taskId":"` + name + `","status":"working"}`), true, nil
}

// TestHandedTaskIsItsCallersAlone: an upstream's task handed through is
// named by an id of Legate's, which the task's text names in place of the
// upstream's, and which only its caller can follow: another caller's, or
// a tampered id, is unknown before any upstream is asked.
func TestHandedTaskIsItsCallersAlone(t *testing.T) {
	asked := 0
	tk := tasks.New(approvals{}, tasks.Options{Key: func(context.Context) []byte { return []byte("key") }, Principal: "local", Upstreams: upstreams{&asked}})
	hand := func(c tasks.Caller) string {
		t.Helper()
		created := `{"resultType":"task","taskId":"up-task-0001","status":"working","content":[{"type":"text","text":"follow task up-task-0001"}]}`
		raw, err := tk.Hand(context.Background(), "team", "mcp.team.post", c, json.RawMessage(created))
		var got struct {
			TaskID  string `json:"taskId"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(raw, &got)
		if err != nil || !strings.HasPrefix(got.TaskID, "lgu1.") || len(got.Content) != 1 || got.Content[0].Text != "follow task "+got.TaskID || strings.Contains(string(raw), "up-task-0001") {
			t.Fatalf("handed task %s, %v: want Legate's id alone, in its text too", raw, err)
		}
		return got.TaskID
	}
	if _, err := tk.Hand(context.Background(), "team", "mcp.team.post", tasks.Caller{}, json.RawMessage(`{"resultType":"task"}`)); err == nil {
		t.Error("a task without an id was handed through")
	}
	declared := `{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	get := func(id string) string {
		_, _, body := post(tk, "tasks/get", nil, `{"taskId":"`+id+`","_meta":`+declared+`}`)
		return body
	}
	mine, alices := hand(tasks.Caller{Principal: "local"}), hand(tasks.Caller{Principal: "alice", Tenant: "acme"})
	for _, id := range []string{alices, mine[:len(mine)-1] + "x", retarget(mine, "other")} {
		if body := get(id); !strings.Contains(body, `"code":-32602`) {
			t.Errorf("tasks/get of %s: %s; want -32602 (no such task)", id, body)
		}
	}
	if asked != 0 {
		t.Fatalf("the upstream was asked %d times about tasks that are not the caller's", asked)
	}
	if body := get(mine); !strings.Contains(body, `"taskId":"`+mine+`"`) || asked != 1 {
		t.Errorf("tasks/get of the caller's own: %s (upstream asked %d times); want the task under Legate's id", body, asked)
	}
}

// refusing answers every request about an upstream's task as an upstream
// that no longer knows it.
type refusing struct{}

func (refusing) Request(_ context.Context, _ string, _ upstream.Client, _, name string, _ json.RawMessage) (json.RawMessage, bool, error) {
	return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task: " + name}
}

// TestHandedTaskRefusedUpstream: the upstream's own error about its task
// is the client's, naming the task by the id the client knows.
func TestHandedTaskRefusedUpstream(t *testing.T) {
	tk := tasks.New(approvals{}, tasks.Options{Key: func(context.Context) []byte { return []byte("key") }, Principal: "local", Upstreams: refusing{}})
	raw, err := tk.Hand(context.Background(), "team", "mcp.team.post", tasks.Caller{Principal: "local"}, json.RawMessage(`{"resultType":"task","taskId":"up-task-0002","status":"working"}`))
	var created struct {
		TaskID string `json:"taskId"`
	}
	if err != nil || json.Unmarshal(raw, &created) != nil {
		t.Fatal(raw, err)
	}
	declared := `{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	_, status, body := post(tk, "tasks/get", nil, `{"taskId":"`+created.TaskID+`","_meta":`+declared+`}`)
	if status != http.StatusBadRequest || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "unknown task: "+created.TaskID) || strings.Contains(body, "up-task-0002") {
		t.Errorf("tasks/get of a task its upstream no longer knows: HTTP %d %s; want -32602 naming the client's id", status, body)
	}
}

// retarget is handed-task id with its upstream changed to up, its signature kept.
func retarget(id, up string) string {
	payload, sig, _ := strings.Cut(strings.TrimPrefix(id, "lgu1."), ".")
	b, _ := base64.RawURLEncoding.DecodeString(payload)
	_, rest, _ := strings.Cut(string(b), "\x00")
	return "lgu1." + base64.RawURLEncoding.EncodeToString([]byte(up+"\x00"+rest)) + "." + sig
}
