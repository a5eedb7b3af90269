package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

// Helpers for the tests with upstream MCP servers behind Legate.

// allowAll is the policy of every config written by upstreamConfig: these tests check the
// relay, not approvals, so no call waits for one.
const allowAll = `policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
`

// upstreamConfig writes a legate config.yaml with the given "upstreams:" section and the
// allow-all policy, and returns its path.
func upstreamConfig(t *testing.T, upstreams string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(upstreams+allowAll), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// yamlList renders strings as a YAML flow list of quoted strings.
func yamlList(items ...string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// legateCLI runs "legate ARGS..." and returns its stdout; it fails t if legate fails.
func legateCLI(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, legateBin, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("legate %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return []byte(stdout.String())
}

// refreshUpstreams runs "legate upstream refresh" so that the tool caches in stateDir are
// filled before "legate serve" starts (serve also refreshes, but in the background). It fails t
// unless every upstream reports ok.
func refreshUpstreams(t *testing.T, config, stateDir string, ids ...string) {
	t.Helper()
	out := string(legateCLI(t, "upstream", "refresh", "--config", config, "--state-dir", stateDir))
	for _, id := range ids {
		if !strings.Contains(out, " "+id+": ok") {
			t.Fatalf("legate upstream refresh: no %q for upstream %s:\n%s", " "+id+": ok", id, out)
		}
	}
}

// catalogTool is one row of "legate tools list --json".
type catalogTool struct {
	Name      string `json:"name"` // the wire name
	Canonical string `json:"canonical"`
	Class     string `json:"class"`
	Source    string `json:"source"`
}

// catalog runs "legate tools list --json" and returns the tools by wire name.
func catalog(t *testing.T, config, stateDir string) map[string]catalogTool {
	t.Helper()
	out := legateCLI(t, "tools", "list", "--json", "--config", config, "--state-dir", stateDir)
	var rows []catalogTool
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("legate tools list --json: %v\n%s", err, out)
	}
	byName := map[string]catalogTool{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	return byName
}

// daemon is a helper server process (an upstream started by the test itself).
type daemon struct {
	name   string
	port   int
	output *syncbuf.Buffer
	stop   func()
}

// startDaemon starts the command that newCmd returns for a free loopback port, in its own
// process group, and waits until 127.0.0.1:port accepts connections. It retries on another port
// when the process exits early (the port was taken between probe and listen). The caller stops
// it, or t's cleanup does; its output is logged if t failed.
func startDaemon(t *testing.T, name string, newCmd func(port int) *exec.Cmd) *daemon {
	t.Helper()
	var lastErr error
	for range 3 {
		d, err := tryDaemon(name, newCmd)
		if err == nil {
			t.Cleanup(func() {
				d.stop()
				if t.Failed() {
					t.Logf("%s output:\n%s", d.name, d.output)
				}
			})
			return d
		}
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil
}

func tryDaemon(name string, newCmd func(port int) *exec.Cmd) (*daemon, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := newCmd(port)
	d := &daemon{name: name, port: port, output: &syncbuf.Buffer{}}
	cmd.Stdout, cmd.Stderr = d.output, d.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	d.stop = func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
		})
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited before it listened on %s: %v\n%s", name, addr, cmd.ProcessState, d.output)
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return d, nil
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("%s: nothing listens on %s after 15s\n%s", name, addr, d.output)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fixtureBin builds go-sdk's conformance everything-server (in the module graph) once per run.
var fixtureBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "everything-server")
	build := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	build.Dir = ".." // the module root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build go-sdk/conformance/everything-server: %v\n%s", err, out)
	}
	return bin, nil
})

// fixtureHTTP starts the go-sdk fixture serving stateful Streamable HTTP on a loopback port.
func fixtureHTTP(t *testing.T, bin string) *daemon {
	t.Helper()
	return fixtureHTTPMode(t, bin, false)
}

// fixtureHTTPMode starts the go-sdk fixture on a loopback port, stateless (protocol
// 2026-07-28 only) or with sessions.
func fixtureHTTPMode(t *testing.T, bin string, stateless bool) *daemon {
	t.Helper()
	return startDaemon(t, "go-sdk everything-server", func(port int) *exec.Cmd {
		return exec.Command(bin, fmt.Sprintf("-http=127.0.0.1:%d", port), fmt.Sprintf("-stateless=%v", stateless))
	})
}

// everythingHTTP starts server-everything's Streamable HTTP transport on a loopback port (the
// loopback.cjs preload keeps it off the other interfaces); its endpoint is /mcp.
func (p *peerSet) everythingHTTP(t *testing.T) *daemon {
	t.Helper()
	return startDaemon(t, "server-everything streamableHttp", func(port int) *exec.Cmd {
		cmd := exec.Command(p.node, "-r", p.loopback, p.everything, "streamableHttp")
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		return cmd
	})
}
