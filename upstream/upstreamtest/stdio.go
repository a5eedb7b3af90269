package upstreamtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio fixture is the test binary itself, re-executed with these
// variables set: call RunStdioChild first thing in TestMain.
const (
	envStdio = "LEGATE_UPSTREAMTEST_STDIO"
	envDir   = "LEGATE_UPSTREAMTEST_DIR"
)

// RunStdioChild serves the stdio fixture and exits when the process was
// started as one (by a Stdio's command); otherwise it returns at once.
// Call it at the top of TestMain, before m.Run.
func RunStdioChild() {
	if os.Getenv(envStdio) == "" {
		return
	}
	os.Exit(serveStdio(os.Getenv(envDir)))
}

// Stdio is a stdio MCP server fixture. Each process it starts records its
// PID in Dir, so a test can check which processes exist. Its tools:
//   - echo (read-only): returns {"text": ...} as text;
//   - pid (read-only): returns the process id as text;
//   - exit: the process exits in the middle of the call;
//   - hang: never answers (until cancelled);
//   - extra (read-only): listed only while SetExtra(true).
//
// While SetDown(true), a new process exits at once, as a server that no
// longer starts; while SetMissing(true), the program does not exist.
type Stdio struct {
	Dir string
}

// NewStdio makes a fixture whose state lives in a fresh temporary directory.
func NewStdio(t testing.TB) *Stdio {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "pids"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := &Stdio{Dir: dir}
	s.SetMissing(false)
	return s
}

// Command is the program to run: a link to this test binary.
func (s *Stdio) Command() []string { return []string{filepath.Join(s.Dir, "server")} }

// SetMissing removes the program (true), as a server uninstalled: starting
// it fails at once. False puts it back.
func (s *Stdio) SetMissing(missing bool) {
	link := s.Command()[0]
	os.Remove(link)
	if missing {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	if err := os.Symlink(exe, link); err != nil {
		panic(err)
	}
}

// Env is the environment the command needs.
func (s *Stdio) Env() map[string]string {
	return map[string]string{envStdio: "1", envDir: s.Dir}
}

// YAML is the command and env keys of an upstream entry, in YAML flow
// style, for a config document.
func (s *Stdio) YAML() string {
	return fmt.Sprintf("command: [%q]\n    env: {%s: %q, %s: %q}", s.Command()[0], envStdio, "1", envDir, s.Dir)
}

// SetDown makes new processes exit at once (true) or serve (false).
func (s *Stdio) SetDown(down bool) { s.flag("down", down) }

// SetExtra makes new processes list the tool "extra".
func (s *Stdio) SetExtra(extra bool) { s.flag("extra", extra) }

// SetNotify makes new processes add the tool "late" once initialized, and
// so send notifications/tools/list_changed at start, as servers that
// register tools after the handshake do.
func (s *Stdio) SetNotify(notify bool) { s.flag("notify", notify) }

// SetSlowRelist makes new processes answer their first tools/list and
// never the next ones (until cancelled): a re-list stays in flight.
func (s *Stdio) SetSlowRelist(slow bool) { s.flag("slowrelist", slow) }

// Lists is how many tools/list requests the process pid received.
func (s *Stdio) Lists(pid int) int {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "pids", strconv.Itoa(pid)))
	return len(b)
}

func (s *Stdio) flag(name string, on bool) {
	p := filepath.Join(s.Dir, name)
	if on {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			panic(err)
		}
		return
	}
	os.Remove(p)
}

// PIDs are the processes started so far (those that exited at once while
// down included), sorted.
func (s *Stdio) PIDs() []int {
	ents, _ := os.ReadDir(filepath.Join(s.Dir, "pids"))
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// Alive are the processes started so far that still exist.
func (s *Stdio) Alive() []int {
	var out []int
	for _, pid := range s.PIDs() {
		if PIDAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// PIDAlive reports whether a process exists (a zombie still does: a child
// that was not waited for counts as left behind).
func PIDAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func serveStdio(dir string) int {
	pid := os.Getpid()
	if err := os.WriteFile(filepath.Join(dir, "pids", strconv.Itoa(pid)), nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		return 1
	}
	if _, err := os.Stat(filepath.Join(dir, "down")); err == nil {
		fmt.Fprintln(os.Stderr, "fixture: down")
		return 1
	}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	var srv *mcp.Server
	opts := &mcp.ServerOptions{}
	if _, err := os.Stat(filepath.Join(dir, "notify")); err == nil {
		opts.InitializedHandler = func(context.Context, *mcp.InitializedRequest) {
			mcp.AddTool(srv, &mcp.Tool{Name: "late", Description: "Added after the handshake.", Annotations: ro},
				func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
				})
		}
	}
	srv = mcp.NewServer(&mcp.Implementation{Name: "upstreamtest-stdio", Version: "1"}, opts)
	// Each tools/list received adds a byte to the process's file (Lists).
	_, err := os.Stat(filepath.Join(dir, "slowrelist"))
	slow, lists := err == nil, 0
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			if f, err := os.OpenFile(filepath.Join(dir, "pids", strconv.Itoa(pid)), os.O_APPEND|os.O_WRONLY, 0); err == nil {
				f.Write([]byte{'l'})
				f.Close()
			}
			if lists++; slow && lists > 1 {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo text.", Annotations: ro},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid", Description: "The process id.", Annotations: ro},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(pid)}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "exit", Description: "Exit mid-call."},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Never answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "Ask the client for a name mid-call (elicitation)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: &jsonschema.Schema{
				Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			text := "declined"
			if res.Action == "accept" {
				text = fmt.Sprint("Hello, ", res.Content["name"])
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	if _, err := os.Stat(filepath.Join(dir, "extra")); err == nil {
		mcp.AddTool(srv, &mcp.Tool{Name: "extra", Description: "Listed on demand.", Annotations: ro},
			func(ctx context.Context, req *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "extra"}}}, nil, nil
			})
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "fixture:", err)
	}
	return 0
}
