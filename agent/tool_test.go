package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/store"
)

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// legate.agent.run called by an MCP client with a token: the run sees the
// caller's profile, its calls are audited under the caller, and the
// record comes back as structured content.
func TestAgentRunToolOverMCP(t *testing.T) {
	other := t.TempDir()
	h := newHarness(t, options{
		extra: `auth: {tokens: true}
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
profiles:
  - {name: files, include: ["host.*", "legate.agent.run"]}
  - {name: everything}
`,
		agent: "  profile: everything\n", // for callers without a profile: never widens alice's
		hosts: "  - id: other\n    type: host\n    config: {workspace_root: " + other + "}\n",
		only:  "[]",
	},
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_write", `{"path":"from-mcp.txt","content":"written by the agent\n"}`)}},
		agenttest.Step{Text: "Wrote from-mcp.txt."},
	)
	tok, err := auth.CreateToken(context.Background(), h.st.Tokens(), auth.Principal{Name: "alice", Role: auth.RoleUser, Profile: "files"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.gw.Handler("127.0.0.1:0"))
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "legate__agent__run", Arguments: map[string]any{"instruction": "Write from-mcp.txt."}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("legate.agent.run failed: %+v", res.Content)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var rec agent.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Stopped != agent.StoppedAnswered || rec.Reply != "Wrote from-mcp.txt." || rec.Principal != "alice" || len(rec.Calls) != 1 || rec.Calls[0].IsError {
		t.Fatalf("record: %s", b)
	}
	if got := h.read("from-mcp.txt"); got != "written by the agent\n" {
		t.Errorf("from-mcp.txt = %q", got)
	}
	// The model was offered alice's profile's tools: host's, not other's.
	offered, _ := json.Marshal(h.model.Requests()[0]["tools"])
	if !strings.Contains(string(offered), "host__fs_write") || strings.Contains(string(offered), "other__") {
		t.Errorf("tools offered: %s", offered)
	}
	// The inner call is audited under alice, beside the run itself.
	var rows []store.AuditRow
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		rows, err = h.st.Audit().Query(context.Background(), store.AuditQuery{Principal: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) >= 2 {
			break
		}
	}
	var tools []string
	for _, r := range rows {
		tools = append(tools, r.Tool)
	}
	if !slices.Contains(tools, "host.fs_write") || !slices.Contains(tools, "legate.agent.run") {
		t.Errorf("alice's audit rows: %v", tools)
	}
	if mine, _ := h.st.AgentRuns().List(context.Background(), store.AgentRunFilter{Principal: "alice"}); len(mine) != 1 || mine[0].ID != rec.ID {
		t.Errorf("alice's history: %+v", mine)
	}
	// A whole model profile says where the conversation goes: not alice's to choose.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "legate__agent__run", Arguments: map[string]any{
		"instruction": "Write elsewhere.", "model_profile": map[string]any{"provider": "openai-compatible", "url": "http://127.0.0.1:1/v1", "model": "x"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "POLICY_DENIED") {
		t.Errorf("model_profile from a user: %v %+v", err, res)
	}
	if n := len(h.model.Requests()); n != 2 {
		t.Errorf("%d model requests, want the 2 of the first run", n)
	}
}
