package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The scenario's tools, as a client sees them: server-everything's, through the upstream "ev".
const (
	matrixEcho     = "mcp__ev__echo"                           // read: runs
	matrixProgress = "mcp__ev__trigger-long-running-operation" // read: 3 progress notifications
	matrixWrite    = "mcp__ev__toggle-simulated-logging"       // write: held for approval
	matrixUnknown  = "no_such_tool"
)

// matrixClient is one client of the matrix: its script in e2e/node/clients, what it can do and
// what it cannot, with the reason.
type matrixClient struct {
	script string
	// protocols maps each protocol the client can be told to speak ("default" is its own choice)
	// to the protocol Legate must see; other is why it cannot speak the other one ("" if it can).
	protocols map[string]string
	other     string
	stdio     string            // why it has no stdio cell ("" if it has one)
	skips     map[string]string // scenario steps it cannot perform, with the reason its script gives
}

// matrixClients: at their default protocol and, where they can choose, at the other.
var matrixClients = []matrixClient{
	{script: "sdk-v1", protocols: map[string]string{"default": "2025-11-25"},
		other: "the v1 SDK speaks 2025-11-25 and earlier only"},
	{script: "sdk-v2", protocols: map[string]string{"default": "2025-11-25", "2026-07-28": "2026-07-28"}},
	{script: "openai-agents", protocols: map[string]string{"default": "2026-07-28"},
		other: "@openai/agents negotiates itself (the v2 SDK's auto mode), with no option to choose",
		skips: map[string]string{"progress": "no progress API"}},
	{script: "ai-sdk", protocols: map[string]string{"default": "2026-07-28", "2025-11-25": "2025-11-25"},
		skips: map[string]string{"progress": "no progress API"}},
	{script: "mastra", protocols: map[string]string{"default": "2026-07-28", "2025-11-25": "2025-11-25"},
		skips: map[string]string{"unknown": "calls only the tools it listed"}},
	{script: "langchain", protocols: map[string]string{"default": "2025-11-25"},
		other: "@langchain/mcp-adapters runs the v1 SDK: 2025-11-25 and earlier only",
		skips: map[string]string{"unknown": "calls only the tools it listed"}},
	{script: "mcp-remote", protocols: map[string]string{"default": "2025-11-25", "2026-07-28": "2026-07-28"},
		stdio: "mcp-remote is itself the stdio side: its client speaks stdio to it, it speaks HTTP to Legate"},
	{script: "inspector-cli", protocols: map[string]string{"default": "2025-11-25"},
		other: "inspector-cli runs the v1 SDK: 2025-11-25 and earlier only",
		skips: map[string]string{"progress": "no progress option"}},
}

// matrixOutput is the JSON line a client script prints (see e2e/node/clients/common.mjs).
type matrixOutput struct {
	Client    string            `json:"client"`
	Version   string            `json:"version"`
	Transport string            `json:"transport"`
	Protocol  *string           `json:"protocol"` // as the client reports it, where it can
	Tools     json.RawMessage   `json:"tools"`    // a list of names, or {error}
	Echo      *matrixStep       `json:"echo"`
	Progress  *matrixStep       `json:"progress"`
	Write     *matrixStep       `json:"write"`
	Unknown   *matrixStep       `json:"unknown"`
	Skipped   map[string]string `json:"skipped"`
}

// matrixStep is one call's outcome as the client gave it: a result, or an error it threw.
type matrixStep struct {
	IsError    *bool  `json:"isError"`
	Text       string `json:"text"`
	Code       string `json:"code"` // the gateway's error class
	ApprovalID string `json:"approvalId"`
	Thrown     bool   `json:"thrown"`
	Error      *struct {
		Code    *int   `json:"code"` // JSON-RPC
		Message string `json:"message"`
	} `json:"error"`
	Notifications []struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
	} `json:"notifications"`
}

// TestClientMatrix: each real MCP client (the v1 and v2 TypeScript SDKs, @openai/agents,
// @ai-sdk/mcp, @mastra/mcp, @langchain/mcp-adapters, mcp-remote, inspector-cli) connects to
// Legate over Streamable HTTP with a bearer token from "legate token create", and over
// "legate stdio" where it can, at its default protocol and at the other one where it can
// choose. In each cell it lists the tools, calls server-everything's echo, receives the progress
// of its long-running operation where it has an API for it, gets APPROVAL_PENDING from a
// write-class tool under the default policy, and a JSON-RPC error -32602 for an unknown tool.
// The protocol each cell spoke is read off the wire (a recording proxy in front of Legate; the
// stdio traffic through tee), not taken from the client's word.
func TestClientMatrix(t *testing.T) {
	p := need(t)
	t.Parallel()
	start := time.Now()
	scripts, err := filepath.Abs(filepath.Join("node", "clients"))
	if err != nil {
		t.Fatal(err)
	}

	// server-everything over Streamable HTTP with shared sessions: HTTP calls that run are relayed
	// as bytes (the fast path); held ones, and every stdio call, go through the SDK.
	ev := p.everythingHTTP(t)
	config := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`upstreams:
  - id: ev
    url: http://127.0.0.1:%d/mcp
auth:
  tokens: true
approvals:
  wait: 500ms
`, ev.port)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	state, stdioState := t.TempDir(), t.TempDir()
	refreshUpstreams(t, config, state, "ev")
	refreshUpstreams(t, config, stdioState, "ev")
	out := legateCLI(t, "token", "create", "matrix", "--config", config, "--state-dir", state)
	token := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if !strings.HasPrefix(token, "lgt_") {
		t.Fatalf("legate token create: %q, want a token on its first line", out)
	}
	s := serveState(t, config, state)
	m := &matrix{p: p, scripts: scripts, config: config, stdioState: stdioState, token: token,
		wire: newWireRecorder(t, s.url("127.0.0.1")), approvals: map[string][]string{}}
	t.Run("cells", func(t *testing.T) {
		for _, c := range matrixClients {
			for _, transport := range []string{"http", "stdio"} {
				for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
					name := fmt.Sprintf("%s/%s/%s", c.script, transport, protocol)
					t.Run(name, func(t *testing.T) { m.cell(t, c, name, transport, protocol) })
				}
			}
		}
	})
	m.checkInbox(t, state)
	t.Logf("TestClientMatrix took %v", time.Since(start).Round(time.Millisecond))
}

// matrix is what the cells of TestClientMatrix share.
type matrix struct {
	p                           *peerSet
	scripts, config, stdioState string
	token                       string
	wire                        *wireRecorder

	mu        sync.Mutex
	approvals map[string][]string // approval id -> HTTP cells that got it
}

// cell runs client c over transport at protocol, or skips with the reason it cannot.
func (m *matrix) cell(t *testing.T, c matrixClient, name, transport, protocol string) {
	arg, want := c.argFor(protocol)
	switch {
	case transport == "stdio" && c.stdio != "":
		t.Skip(c.stdio)
	case arg == "":
		t.Skip(c.other)
	}
	t.Parallel()
	cell := &matrixCell{client: c, name: name, arg: arg, want: want, msg: "matrix-" + nonce()}
	if transport == "http" {
		cell.url, cell.token = m.wire.url(name), m.token
	} else {
		cell.command = stdioTee(t, m.config, m.stdioState)
	}
	r, log := cell.run(t, m.p, m.scripts)
	var saw []string
	var sent string // Legate's messages to the client
	if transport == "http" {
		saw, sent = m.wire.protocols(name), m.wire.answers(name)
	} else {
		saw, sent = cell.command.protocols(t), cell.command.sent()
	}
	cell.check(t, r, log, sent)
	if !slices.Equal(saw, []string{want}) {
		t.Errorf("%s: tools/call spoke protocol %q on the wire, want only %s\n%s", name, saw, want, log)
	}
	if transport == "http" {
		// 2025-11-25 has sessions; 2026-07-28 is stateless.
		with, all := m.wire.sessions(name)
		if want == "2026-07-28" && with > 0 || want == "2025-11-25" && with < all {
			t.Errorf("%s: %d of %d tools/call requests carried an Mcp-Session-Id, want %s", name, with, all,
				map[string]string{"2025-11-25": "all", "2026-07-28": "none"}[want])
		}
		if r.Write != nil && r.Write.ApprovalID != "" {
			m.mu.Lock()
			m.approvals[r.Write.ApprovalID] = append(m.approvals[r.Write.ApprovalID], name)
			m.mu.Unlock()
		}
	}
	t.Logf("%s %s: %s, protocol %s", r.Client, r.Version, name, want)
}

// checkInbox: every HTTP cell made the same write with the same token, so the approval ids they
// got are pending requests in the inbox for that tool, made by the token's principal. (One id
// for all, unless two cells opened the request at the same instant.)
func (m *matrix) checkInbox(t *testing.T, state string) {
	t.Helper()
	if len(m.approvals) == 0 {
		return // no HTTP cell ran (-run)
	}
	list := legateCLI(t, "approvals", "list", "--all", "--json", "--config", m.config, "--state-dir", state)
	var views []struct{ ID, State, Tool, Principal string }
	if err := json.Unmarshal(list, &views); err != nil {
		t.Fatalf("legate approvals list --all --json: %v\n%s", err, list)
	}
	inbox := map[string]string{}
	for _, v := range views {
		inbox[v.ID] = fmt.Sprintf("%s %s by %s", v.State, v.Tool, v.Principal)
	}
	for id, cells := range m.approvals {
		if got, want := inbox[id], "pending mcp.ev.toggle-simulated-logging by matrix"; got != want {
			t.Errorf("approval %s (cells %v): in the inbox as %q, want %q", id, cells, got, want)
		}
	}
	if len(m.approvals) > 1 {
		t.Logf("the HTTP cells' identical writes opened %d approval requests: %v", len(m.approvals), m.approvals)
	}
}

// argFor is the --protocol argument that makes c speak protocol, and the protocol Legate must
// see; arg is "" when c cannot be made to speak it.
func (c matrixClient) argFor(protocol string) (arg, want string) {
	if c.protocols["default"] == protocol {
		return "default", protocol
	}
	if w, ok := c.protocols[protocol]; ok {
		return protocol, w
	}
	return "", ""
}

// matrixCell is one run of a client script.
type matrixCell struct {
	client     matrixClient
	name       string
	arg        string // --protocol
	want       string
	msg        string // echo's message
	url, token string // HTTP
	command    *teeCommand
}

func (c *matrixCell) run(t *testing.T, p *peerSet, scripts string) (*matrixOutput, string) {
	t.Helper()
	args := []string{filepath.Join(scripts, c.client.script+".mjs"), "--protocol", c.arg, "--message", c.msg,
		"--echo", matrixEcho, "--progress", matrixProgress, "--write", matrixWrite, "--unknown", matrixUnknown}
	if c.url != "" {
		args = append(args, "--http", c.url, "--token", c.token)
	} else {
		args = append(append(args, "--"), c.command.argv...)
	}
	env := []string{
		"MCP_REMOTE_CONFIG_DIR=" + t.TempDir(), // mcp-remote's state, ~/.mcp-auth otherwise
		"MASTRA_TELEMETRY_DISABLED=1",
	}
	stdout, stderr, err := p.runNode(t, t.TempDir(), env, args...)
	log := fmt.Sprintf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if c.command != nil {
		log += "\nlegate stdio traffic:\n" + c.command.traffic()
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.name, err, log)
	}
	var r matrixOutput
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &r); err != nil {
		t.Fatalf("%s: decoding its output: %v\n%s", c.name, err, log)
	}
	return &r, log
}

// check asserts the scenario's outcomes.
func (c *matrixCell) check(t *testing.T, r *matrixOutput, log, sent string) {
	t.Helper()
	for step, reason := range c.client.skips {
		if got, ok := r.Skipped[step]; !ok || !strings.Contains(got, reason) {
			t.Errorf("%s: step %s: skipped %q, want it skipped as %q", c.name, step, got, reason)
		}
	}
	for step, reason := range r.Skipped {
		if _, ok := c.client.skips[step]; !ok {
			t.Errorf("%s: the script skipped %s (%s), which this client can do", c.name, step, reason)
		}
	}

	var tools []string
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		t.Fatalf("%s: tools/list failed: %s\n%s", c.name, r.Tools, log)
	}
	if !hasAll(tools, matrixEcho, matrixProgress, matrixWrite) || slices.Contains(tools, matrixUnknown) {
		t.Errorf("%s: tools %q, want %s, %s and %s, not %s", c.name, tools, matrixEcho, matrixProgress, matrixWrite, matrixUnknown)
	}

	if e := r.Echo; e == nil || e.Thrown || e.Error != nil || (e.IsError != nil && *e.IsError) || !strings.Contains(e.Text, "Echo: "+c.msg) {
		t.Errorf("%s: %s: %s, want a result with %q", c.name, matrixEcho, jsonOf(e), "Echo: "+c.msg)
	}

	if _, skip := c.client.skips["progress"]; !skip {
		pr := r.Progress
		if pr == nil || pr.Thrown || pr.Error != nil || !strings.Contains(pr.Text, "Long running operation completed") {
			t.Errorf("%s: %s: %s, want its result", c.name, matrixProgress, jsonOf(pr))
		} else {
			// Legate sends the upstream's 3 notifications before the result; the client gets them.
			if n := progressBefore(sent, "Long running operation completed"); n != 3 {
				t.Errorf("%s: %s {duration: 1, steps: 3}: Legate sent %d progress notifications before the result, want the upstream's 3", c.name, matrixProgress, n)
			}
			got := pr.Notifications
			if len(got) == 0 {
				t.Errorf("%s: %s with a progress callback: the client received no progress notification", c.name, matrixProgress)
			}
			for i, n := range got {
				if n.Progress != float64(i+1) || n.Total != 3 {
					t.Errorf("%s: progress notifications %+v, want 1, 2, 3 of 3 in order", c.name, got)
					break
				}
			}
			if len(got) < 3 {
				// The TypeScript SDKs hand a notification to its handler a microtask later, but
				// settle a response at once and drop its progress handler: a notification read in
				// the same chunk as the result is lost (shared/protocol.js, _onnotification and
				// _onresponse). The wire shows Legate sent it in time.
				t.Logf("%s: the client received %d of the 3 progress notifications Legate sent before the result (the SDK's notification/response race)", c.name, len(got))
			}
		}
	}

	// A client either hands back the isError result or throws with its text; either way the
	// application sees the class and the approval id.
	if w := r.Write; w == nil || w.Code != "APPROVAL_PENDING" && !strings.Contains(w.Text, "APPROVAL_PENDING: ") ||
		!strings.HasPrefix(w.ApprovalID, "ap_") || (!w.Thrown && (w.IsError == nil || !*w.IsError)) {
		t.Errorf("%s: %s: %s, want an isError APPROVAL_PENDING result with its approval id", c.name, matrixWrite, jsonOf(w))
	}

	if _, skip := c.client.skips["unknown"]; !skip {
		if u := r.Unknown; u == nil || u.Error == nil || u.Error.Code == nil || *u.Error.Code != -32602 || !strings.Contains(u.Error.Message, matrixUnknown) {
			t.Errorf("%s: %s: %s, want JSON-RPC error -32602 naming the tool", c.name, matrixUnknown, jsonOf(u))
		}
	}
	if t.Failed() {
		t.Logf("%s output:\n%s", c.name, log)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
