package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

// cliIn runs `legate ARGS...` from the folder dir with env added, and returns its stdout and
// stderr, failing t when it fails.
func cliIn(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, legateBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("legate %s (in %s): %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), dir, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// serveIn starts `legate serve` from the folder dir with args, and waits for /healthz.
func serveIn(t *testing.T, dir, addr string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(legateBin, append([]string{"serve"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var log syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("legate serve (in %s):\n%s", dir, log.String())
		}
	})
	if err := healthyWithin(addr, exited); err != nil {
		t.Fatalf("legate serve in %s: %v\n%s", dir, err, log.String())
	}
}

// healthyWithin waits up to 15 s for http://addr/healthz to answer 200.
func healthyWithin(addr string, exited <-chan error) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("exited before it was healthy: %v", err)
		default:
		}
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("/healthz not 200 within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCLIFromAnotherFolderActsOnTheRunningServer: a server started from `legate init`'s folder
// (state_dir ./state) is found by the CLI run from another folder, with no flag: status,
// upstream add, approvals list and approve act on that server's state, through it (the decision
// is audited), and each says so; a server on an explicit --state-dir sees the skills that
// `legate skills install --state-dir` put there.
func TestCLIFromAnotherFolderActsOnTheRunningServer(t *testing.T) {
	p := need(t)
	t.Parallel()
	env := []string{"XDG_STATE_HOME=" + filepath.Join(t.TempDir(), "state-home"), "LEGATE_STATE_DIR=", "LEGATE_CONFIG="}
	home, elsewhere := t.TempDir(), t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cliIn(t, home, env, "init", "--listen", addr)
	serveIn(t, home, addr, env)

	out, errs := cliIn(t, elsewhere, env, "status")
	if !strings.Contains(out, addr) || !strings.Contains(errs, filepath.Join(home, "state")) {
		t.Fatalf("legate status from another folder did not reach the running server:\nstdout: %s\nstderr: %s", out, errs)
	}

	// A change to another store says, before it is made, that the running server will not see it.
	_, errs = cliIn(t, elsewhere, env, "token", "create", "bob", "--state-dir", t.TempDir())
	if !strings.Contains(errs, "a server runs on another state directory") || !strings.Contains(errs, "--config "+filepath.Join(home, "config.yaml")) {
		t.Fatalf("token create on another state did not name the running server's:\n%s", errs)
	}

	out, errs = cliIn(t, elsewhere, env, "upstream", "add", "everything", "--", p.node, p.everything, "stdio")
	if !strings.Contains(out, `added upstream "everything"`) || !strings.Contains(errs, "through the running server") {
		t.Fatalf("upstream add:\nstdout: %s\nstderr: %s", out, errs)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "onestate", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const held = "mcp__everything__toggle-simulated-logging"
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasTool(tools, held) {
		t.Fatalf("the running server does not offer %s after upstream add from another folder", held)
	}

	// A write waits for approval (init's policy); it is approved from the other folder.
	type callOut struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan callOut, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: held, Arguments: map[string]any{}})
		done <- callOut{res, err}
	}()
	var id string
	for deadline := time.Now().Add(20 * time.Second); id == ""; time.Sleep(200 * time.Millisecond) {
		out, _ := cliIn(t, elsewhere, env, "approvals", "list", "-o", "json")
		var list []struct{ ID, Tool string }
		if err := json.Unmarshal([]byte(out), &list); err == nil && len(list) == 1 {
			id = list[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("legate approvals list from another folder never showed the held call: %s", out)
		}
	}
	out, errs = cliIn(t, elsewhere, env, "approvals", "approve", id)
	if !strings.Contains(out, "approved "+id) || !strings.Contains(errs, "through the running server") {
		t.Fatalf("approvals approve:\nstdout: %s\nstderr: %s", out, errs)
	}
	select {
	case c := <-done:
		if c.err != nil || c.res.IsError {
			t.Fatalf("the approved call: %v %+v", c.err, c.res)
		}
	case <-time.After(time.Minute):
		t.Fatal("the approved call did not return")
	}
	// The audit writer flushes its rows in batches: the row comes within
	// its flush interval.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, _ = cliIn(t, elsewhere, env, "audit", "tail", "-n", "100")
		if strings.Contains(out, "admin.approvals.approve") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the decision made from the CLI is not in the audit log:\n%s", out)
			break
		}
	}

	// Skills installed into an explicit state directory reach the server on it.
	state, work := t.TempDir(), t.TempDir()
	src := filepath.Join(t.TempDir(), "triage")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: triage\ndescription: Use when a service misbehaves and its logs must be read.\n---\nsteps\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("connectors:\n  - id: host\n    type: host\n    config: {workspace_root: %q}\n", work)), 0o600)
	port2, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr2 := fmt.Sprintf("127.0.0.1:%d", port2)
	serveIn(t, elsewhere, addr2, env, "--config", cfg, "--state-dir", state, "--listen", addr2)
	cliIn(t, t.TempDir(), env, "skills", "install", "--state-dir", state, src)
	cliIn(t, t.TempDir(), env, "skills", "enable", "--state-dir", state, "triage")
	cs2, err := mcp.NewClient(&mcp.Implementation{Name: "onestate", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr2 + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	var listed string
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(listed, "triage"); time.Sleep(300 * time.Millisecond) {
		res, err := cs2.CallTool(ctx, &mcp.CallToolParams{Name: "host__skills_list", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			listed = string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the enabled skill never appeared in the server's skills_list: %v %s", err, listed)
		}
	}
}

func hasTool(res *mcp.ListToolsResult, name string) bool {
	for _, t := range res.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
