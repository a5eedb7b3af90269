package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

// server is a running "legate serve".
type server struct {
	addr   string // 127.0.0.1:PORT
	port   int
	pid    int
	stderr *syncbuf.Buffer
}

func (s *server) url(host string) string { return fmt.Sprintf("http://%s:%d/mcp", host, s.port) }

// serve starts "legate serve" on a free loopback port with a fresh state dir, from a working
// dir without config.yaml, with env added to the environment; config may be empty. It waits
// for /healthz and stops the process when t ends, logging its stderr if t failed.
func serve(t *testing.T, config string, env ...string) *server {
	t.Helper()
	return serveState(t, config, "", env...)
}

// serveState is serve with the state dir given (a fresh one when stateDir is empty), e.g. one
// whose upstream tool caches "legate upstream refresh" has filled.
func serveState(t *testing.T, config, stateDir string, env ...string) *server {
	t.Helper()
	if stateDir == "" {
		stateDir = t.TempDir()
	}
	var lastErr error
	for range 3 { // a free port can be taken between probe and listen
		s, err := startServe(t, config, stateDir, env)
		if err == nil {
			return s
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

func startServe(t *testing.T, config, stateDir string, env []string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startServeAt(t, config, stateDir, env, port)
}

// startServeAt is startServe on a port chosen by the caller, e.g. one its
// config names.
func startServeAt(t *testing.T, config, stateDir string, env []string, port int) (*server, error) {
	s := &server{addr: fmt.Sprintf("127.0.0.1:%d", port), port: port, stderr: &syncbuf.Buffer{}}
	args := []string{"serve", "--listen", s.addr, "--state-dir", stateDir}
	if config != "" {
		args = append(args, "--config", config)
	}
	cmd := exec.Command(legateBin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.pid = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Logf("legate serve did not stop within 5s of SIGTERM; killing it")
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("legate %s exited before it was healthy: %v\n%s", strings.Join(args, " "), err, s.stderr)
		default:
		}
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("legate %s: /healthz not 200 within 15s (last: %v)\n%s", strings.Join(args, " "), describe(resp, err), s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("legate serve output:\n%s", s.stderr)
		}
	})
	return s, nil
}

func describe(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
