package agent_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/host"
	"github.com/legate-mcp/legate/connectors/host/skills"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// harness is a gateway with one host connector (id host) on a temporary
// workspace, the agent wired to it, and a scripted model server.
type harness struct {
	t         *testing.T
	gw        *server.Gateway
	st        store.Store
	cfg       *config.File
	runner    *agent.Runner
	model     *agenttest.Server
	workspace string
	logs      *syncbuf.Buffer
}

type options struct {
	provider string // openai-compatible (default) or anthropic
	extra    string // more top-level YAML (policy:, approvals:)
	agent    string // more agent: keys, indented by two spaces
	timeout  string // agent.model.request_timeout
	hosts    string // more connectors, as YAML list items
	only     string // agent.connectors (default [host])
	skill    string // SKILL.md of a skill installed and enabled
}

func newHarness(t *testing.T, o options, script ...agenttest.Step) *harness {
	t.Helper()
	h := &harness{t: t, workspace: t.TempDir(), model: agenttest.NewServer(t, script...), logs: &syncbuf.Buffer{}}
	if o.provider == "" {
		o.provider = "openai-compatible"
	}
	skillsDir := filepath.Join(t.TempDir(), "skills")
	if o.skill != "" {
		src := t.TempDir()
		if err := os.WriteFile(filepath.Join(src, "SKILL.md"), []byte(o.skill), 0o644); err != nil {
			t.Fatal(err)
		}
		lib := skills.Open(skillsDir)
		got, err := lib.Install(context.Background(), src)
		if err != nil || len(got) != 1 {
			t.Fatalf("installing the skill: %v %v", got, err)
		}
		if err := lib.SetEnabled(got[0].Name, true); err != nil {
			t.Fatal(err)
		}
	}
	if o.only == "" {
		o.only = "[host]"
	}
	if o.timeout == "" {
		o.timeout = "10s"
	}
	url := h.model.URL
	if o.provider == "anthropic" {
		url = strings.TrimSuffix(url, "/v1")
	}
	t.Setenv("SCRIPTED_MODEL_TOKEN", "sk-scripted")
	if o.extra == "" {
		o.extra = "policy:\n  defaults: {read: allow, draft: allow, write: allow, destructive: allow}\n"
	}
	yaml := o.extra + `connectors:
  - id: host
    type: host
    config:
      workspace_root: ` + h.workspace + `
      skills_dir: ` + skillsDir + `
` + o.hosts + `agent:
  model:
    provider: ` + o.provider + `
    url: ` + url + `
    model: scripted-1
    access_token: {env: SCRIPTED_MODEL_TOKEN}
    request_timeout: ` + o.timeout + `
    max_retries: 3
  connectors: ` + o.only + `
  max_turns: 6
` + o.agent
	cfg, err := config.Parse([]byte(yaml), func(k string) (string, bool) { return os.LookupEnv(k) })
	if err != nil {
		t.Fatal(err)
	}
	h.cfg = cfg
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st = st
	h.runner = &agent.Runner{Runs: st.AgentRuns(), Config: func() *config.File { return cfg },
		Log: slog.New(slog.NewTextHandler(h.logs, nil)), Backoff: 10 * time.Millisecond, StallLog: 50 * time.Millisecond, ApprovalPoll: 20 * time.Millisecond, Approvals: st.Approvals()}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st, Tools: []connectors.Builtin{h.runner.Builtin()}})
	if err != nil {
		t.Fatal(err)
	}
	gw.StartAudit(context.Background())
	t.Cleanup(func() { gw.Close() })
	h.gw = gw
	h.runner.Server = gw.MCPServer
	return h
}

// run runs the agent as the unauthenticated local caller.
func (h *harness) run(req agent.Request) *agent.Record {
	h.t.Helper()
	if req.Caller == "" {
		req.Caller = "local"
	}
	rec, err := h.runner.Run(context.Background(), req)
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

func (h *harness) write(name, content string) {
	h.t.Helper()
	p := filepath.Join(h.workspace, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) read(name string) string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.workspace, name))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

// history is the run as the store keeps it.
func (h *harness) history(id string) *agent.Record {
	h.t.Helper()
	rec, err := agent.Show(context.Background(), h.st.AgentRuns(), id, "", "")
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}
