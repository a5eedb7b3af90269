package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is an MCP server the harness runs over stdio, as an MCP client
// runs one it was configured with: a process of its own and one session,
// which the harness's workers share (the go-sdk client sends their calls
// concurrently, as a client with several calls in flight does).
type Stdio struct {
	Session *mcp.ClientSession
	// PID is the server's process, whose CPU is counted.
	PID int
	log string
}

// StartStdio runs argv with env added, its standard error logged in o.Dir
// under name, and opens the go-sdk session to it (the initialize
// handshake, given 30 s: a server may probe its host first).
func StartStdio(ctx context.Context, o Options, name string, argv, env []string) (*Stdio, error) {
	log := filepath.Join(o.Dir, name+".log")
	logf, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "legate-bench", Version: "1"}, nil)
	// A session at 2025-11-25, as the HTTP sessions of the harness
	// (OpenSessions), so that a read over stdio and over HTTP is measured
	// on the same protocol, and anchors of that era speak it too.
	s, err := c.Connect(ictx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		out, _ := os.ReadFile(log)
		return nil, fmt.Errorf("%s: %w (its standard error: %.500s)", name, err, strings.TrimSpace(string(out)))
	}
	return &Stdio{Session: s, PID: cmd.Process.Pid, log: log}, nil
}

// Stop closes the session, which ends the process (stdin closed, then
// SIGTERM, then SIGKILL).
func (s *Stdio) Stop() { s.Session.Close() }

// Side is the side of s calling tool with args, named name.
func (s *Stdio) Side(name, tool string, args map[string]any) Side {
	return Side{Name: name, PID: s.PID, Call: func(ctx context.Context, _ int) error {
		_, err := Call(ctx, s.Session, tool, args)
		if err != nil {
			return fmt.Errorf("%w (its log: %s)", err, s.log)
		}
		return nil
	}}
}
