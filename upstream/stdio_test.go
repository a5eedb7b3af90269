package upstream_test

import (
	"fmt"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

func stdioConfig(id string, fx *upstreamtest.Stdio) upstream.Config {
	return upstream.Config{ID: id, Command: fx.Command(), Env: fx.Env()}
}

func callPID(t *testing.T, m *upstream.Manager, tl *upstream.Tool) (int, error) {
	t.Helper()
	res, err := call(m, tl, "")
	if err != nil {
		return 0, err
	}
	if res.IsError {
		return 0, fmt.Errorf("error result: %s", upstreamtest.Text(res))
	}
	return strconv.Atoi(upstreamtest.Text(res))
}

// Close ends the stdio processes and leaves no goroutine behind.
func TestStdioProcessEndsOnClose(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	m := newManager(t, memStore(t), upstream.Options{}, stdioConfig("local", fx))
	m.Start(upstreamtest.Context(t))
	pidTool := waitTool(t, m, "local", "pid", 10*time.Second)
	pid, err := callPID(t, m, pidTool)
	if err != nil {
		t.Fatal(err)
	}
	if !upstreamtest.PIDAlive(pid) {
		t.Fatalf("process %d not running", pid)
	}
	if st := status(t, m, "local"); st.Sessions != 1 || st.Transport != "stdio" {
		t.Errorf("status %+v", st)
	}
	m.Close()
	if alive := fx.Alive(); len(alive) > 0 {
		t.Fatalf("processes %v still running after Close (started: %v)", alive, fx.PIDs())
	}
}

// A stdio process that exits (killed here) is restarted with backoff and
// its tools listed again; calls work again.
func TestStdioRestartedAndRelisted(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	m := newManager(t, memStore(t), upstream.Options{}, stdioConfig("local", fx))
	m.Start(upstreamtest.Context(t))
	pidTool := waitTool(t, m, "local", "pid", 10*time.Second)
	first, err := callPID(t, m, pidTool)
	if err != nil {
		t.Fatal(err)
	}
	if tool(m, "local", "extra") != nil {
		t.Fatal("extra listed before it exists")
	}

	// The next process lists one more tool: seeing it proves the re-listing.
	fx.SetExtra(true)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitTool(t, m, "local", "extra", 10*time.Second)
	var second int
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		second, err = callPID(t, m, pidTool)
		return err == nil
	}, "no successful call after the restart: %v", err)
	if second == first {
		t.Fatalf("same pid %d after the kill", first)
	}
	upstreamtest.Eventually(t, 5*time.Second, func() bool { return !upstreamtest.PIDAlive(first) }, "killed process %d was not reaped", first)
	if st := status(t, m, "local"); st.Sessions != 1 || st.Tools != 6 || st.LastError != "" {
		t.Errorf("status after restart %+v", st)
	}
	m.Close()
	if alive := fx.Alive(); len(alive) > 0 {
		t.Fatalf("processes %v still running after Close", alive)
	}
}

// A process that dies in the middle of a call fails that call with
// UPSTREAM_UNAVAILABLE; the next calls reach a new process.
func TestStdioCrashMidCall(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	m := newManager(t, memStore(t), upstream.Options{}, stdioConfig("local", fx))
	m.Start(upstreamtest.Context(t))
	exit := waitTool(t, m, "local", "exit", 10*time.Second)
	pidTool := tool(m, "local", "pid")
	first, err := callPID(t, m, pidTool)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = call(m, exit, "")
	if code := upstreamCode(err); code != legate.CodeUpstreamUnavailable {
		t.Fatalf("call to a crashing process: %v, want UPSTREAM_UNAVAILABLE", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the crash took %s to notice", el)
	}
	var second int
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		second, err = callPID(t, m, pidTool)
		return err == nil
	}, "no successful call after the crash: %v", err)
	if second == first {
		t.Fatal("same process after the crash")
	}
	m.Close()
	if alive := fx.Alive(); len(alive) > 0 {
		t.Fatalf("processes %v still running after Close", alive)
	}
	if n := len(fx.PIDs()); n > 4 {
		t.Errorf("%d processes started for one crash: %v", n, fx.PIDs())
	}
}

// A stdio upstream that no longer starts keeps its cached tools; calls
// fail fast, restarts back off, and no process is left behind.
func TestStdioThatWillNotStart(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	st := memStore(t)
	m := newManager(t, st, upstream.Options{}, stdioConfig("local", fx))
	m.Start(upstreamtest.Context(t))
	echo := waitTool(t, m, "local", "echo", 10*time.Second)
	fx.SetDown(true)
	pid, err := callPID(t, m, tool(m, "local", "pid"))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		return status(t, m, "local").LastError != ""
	}, "the failed restart was not recorded")
	for i := range 3 {
		start := time.Now()
		_, err := call(m, echo, "x")
		if code := upstreamCode(err); code != legate.CodeUpstreamUnavailable {
			t.Fatalf("call %d: %v, want UPSTREAM_UNAVAILABLE", i, err)
		}
		// A call after the backoff tries one start, which lasts as long as the
		// process takes to exit: this test binary, slow to start under -race.
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("call %d took %s", i, el)
		}
	}
	if got := names(m, "local"); !slices.Contains(got, "echo") {
		t.Errorf("cached tools lost: %v", got)
	}
	// Restarts back off (250ms, doubling): no tight loop of processes.
	started := len(fx.PIDs())
	time.Sleep(2 * time.Second)
	if n := len(fx.PIDs()) - started; n > 6 {
		t.Errorf("%d processes started in 2s by a server that exits at once", n)
	}
	m.Close()
	if alive := fx.Alive(); len(alive) > 0 {
		t.Fatalf("processes %v still running after Close", alive)
	}
}
