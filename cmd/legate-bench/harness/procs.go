package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat
// (100 on every Linux platform Go supports).
const clockTicks = 100

// Proc is one child process: a server the harness started.
type Proc struct {
	name string
	cmd  *exec.Cmd
	Addr string // host:port it listens on
	log  string // its stderr (and stdout after the LISTEN line)
	done chan struct{}
	err  error
}

var (
	procsMu sync.Mutex
	procs   = map[*Proc]bool{}
)

// StartProc starts argv with its stderr in dir/<name>.log. With addr ""
// the child must print "LISTEN <addr>" on stdout (our own subcommands);
// otherwise it listens on addr and ready is polled by the caller.
func StartProc(ctx context.Context, dir, name, addr string, argv ...string) (*Proc, error) {
	return StartProcEnv(ctx, dir, name, addr, nil, argv...)
}

// StartProcEnv is StartProc with env added to the child's environment.
func StartProcEnv(ctx context.Context, dir, name, addr string, env []string, argv ...string) (*Proc, error) {
	p := &Proc{name: name, Addr: addr, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stderr = logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout io.ReadCloser
	if addr == "" {
		if stdout, err = p.cmd.StdoutPipe(); err != nil {
			logf.Close()
			return nil, err
		}
	} else {
		p.cmd.Stdout = logf
	}
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	procsMu.Lock()
	procs[p] = true
	procsMu.Unlock()
	go func() {
		p.err = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	if addr != "" {
		return p, nil
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(logf, stdout)
	}()
	select {
	case l, ok := <-lines:
		if a, found := strings.CutPrefix(l, "LISTEN "); ok && found {
			p.Addr = a
			return p, nil
		}
		p.Stop()
		return nil, fmt.Errorf("%s did not start: %s", name, p.Tail())
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	p.Stop()
	return nil, fmt.Errorf("%s did not start within 30s: %s", name, p.Tail())
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited says, once the process has ended, that it did, how, and the end
// of its log; nil while it runs.
func (p *Proc) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v %s", p.name, p.err, p.Tail())
	default:
		return nil
	}
}

// Stop ends the process: SIGTERM, then SIGKILL after 5 seconds.
func (p *Proc) Stop() {
	if p == nil {
		return
	}
	procsMu.Lock()
	delete(procs, p)
	procsMu.Unlock()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Kill ends the process at once.
func (p *Proc) Kill() {
	procsMu.Lock()
	delete(procs, p)
	procsMu.Unlock()
	p.cmd.Process.Kill()
	<-p.done
}

// StopAll ends every child still running.
func StopAll() {
	procsMu.Lock()
	all := make([]*Proc, 0, len(procs))
	for p := range procs {
		all = append(all, p)
	}
	procsMu.Unlock()
	for _, p := range all {
		p.Kill()
	}
}

// Tail is the end of the process's log, for error messages.
func (p *Proc) Tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return fmt.Sprintf("(log %s)\n%s", p.log, bytes.TrimSpace(b))
}

// CPUSeconds is the process's user+system CPU time so far, all threads.
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: fields count from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(ut+st) / clockTicks, nil
}

// RSSBytes is the process's resident set size (VmRSS).
func RSSBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// FreeAddr returns a loopback address nothing listens on (for the real
// legate binary, which takes --listen).
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// moduleRoot is the directory of the go.mod holding cmd/legate.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the legate module: run from the repository")
	}
	return filepath.Dir(gomod), nil
}

// BuildLegate builds ./cmd/legate into dir/name as `make build` does
// (static, -trimpath, stripped), with the build tags given: P4 measures
// the binary that is shipped, and its size.
func BuildLegate(dir, name string, tags ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	args := []string{"build", "-trimpath", "-ldflags", "-s -w"}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, "-o", bin, "./cmd/legate")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
	}
	return bin, nil
}

// WriteFile writes content to dir/name (a config the processes read) and
// returns its path.
func WriteFile(dir, name, content string) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, []byte(content), 0o600)
}

// StartLegate runs `legate serve` (the real binary) and waits for /readyz.
func StartLegate(ctx context.Context, dir, name, bin, cfg, state string) (*Proc, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := StartProc(ctx, dir, name, addr, bin, "serve", "--config", cfg, "--state-dir", state, "--listen", addr)
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, p, "http://"+addr+"/readyz"); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// StartLegateInProcess runs `legate-bench legate` (Legate embedded with
// the no-op connector type).
func StartLegateInProcess(ctx context.Context, dir, name, cfg, state string, extra ...string) (*Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	argv := append([]string{exe, "legate", "-config", cfg, "-state-dir", state}, extra...)
	p, err := StartProc(ctx, dir, name, "", argv...)
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, p, "http://"+p.Addr+"/readyz"); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// StartSelf runs one of the harness's own server subcommands.
func StartSelf(ctx context.Context, dir, name string, args ...string) (*Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return StartProc(ctx, dir, name, "", append([]string{exe}, args...)...)
}

// waitReady polls url until it answers 200 (10 s at most).
func waitReady(ctx context.Context, p *Proc, url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %v %s", p.name, p.err, p.Tail())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after 10s: %s", p.name, p.Tail())
}

// UpstreamStats reads the upstream process's counters.
func UpstreamStats(p *Proc) (Stats, error) {
	var s Stats
	resp, err := http.Get("http://" + p.Addr + "/_bench/stats")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}

func ResetUpstreamStats(p *Proc) error {
	resp, err := http.Post("http://"+p.Addr+"/_bench/reset", "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// WaitQuiet waits until the upstream has seen no request for quiet (at
// most max): Legate's start-up refresh is over.
func WaitQuiet(p *Proc, quiet, max time.Duration) error {
	deadline := time.Now().Add(max)
	last, err := UpstreamStats(p)
	if err != nil {
		return err
	}
	since := time.Now()
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		s, err := UpstreamStats(p)
		if err != nil {
			return err
		}
		if s.Requests != last.Requests {
			last, since = s, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return nil
		}
	}
	return fmt.Errorf("upstreams still receiving requests after %s", max)
}

// WaitIdle waits until p uses less than 5% of one CPU over window (at most
// max) and returns how long it waited and the CPU seconds it used then.
func WaitIdle(p *Proc, window, max time.Duration) (time.Duration, float64, error) {
	start := time.Now()
	c0, err := CPUSeconds(p.Pid())
	if err != nil {
		return 0, 0, err
	}
	prev := c0
	for time.Since(start) < max {
		time.Sleep(window)
		c, err := CPUSeconds(p.Pid())
		if err != nil {
			return 0, 0, err
		}
		if c-prev < 0.05*window.Seconds() {
			return time.Since(start), c - c0, nil
		}
		prev = c
	}
	return 0, 0, fmt.Errorf("%s still busy after %s", p.name, max)
}
