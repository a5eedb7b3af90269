package e2e_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The conformance suite's active server scenarios against go-sdk's everything-server directly
// (stateful HTTP) give this total with the pinned versions.
const wantDirectPassed, wantDirectFailed = 40, 0

// TestUpstreamConformance: with go-sdk's conformance fixture as a transparent upstream
// (prefix: false, session: per_client), the official conformance suite (--suite active) gives
// through Legate exactly the result it gives against the fixture directly, scenario by
// scenario; once with the fixture reached over Streamable HTTP, once over stdio.
func TestUpstreamConformance(t *testing.T) {
	p := need(t)
	t.Parallel()
	bin, err := fixtureBin()
	if err != nil {
		t.Fatal(err)
	}

	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			var upstream string
			switch transport {
			case "http":
				fx := fixtureHTTP(t, bin)
				upstream = fmt.Sprintf("url: http://127.0.0.1:%d/mcp", fx.port)
			case "stdio":
				upstream = "command: " + yamlList(bin)
			}
			config := upstreamConfig(t, fmt.Sprintf(`session_idle_timeout: 2s
upstreams:
  - id: conformance
    %s
    prefix: false
    session: per_client
`, upstream))
			state := t.TempDir()
			refreshUpstreams(t, config, state, "conformance")
			s := serveState(t, config, state)

			direct, err := directConformance(t, p, bin)
			if err != nil {
				t.Fatal(err)
			}
			got, err := runConformance(t, p, s.url("localhost"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("conformance --suite active: directly: %d passed, %d failed; through Legate (upstream over %s): %d passed, %d failed",
				direct.passed, direct.failed, transport, got.passed, got.failed)
			if diff := direct.diff(got); diff != "" {
				t.Errorf("conformance --suite active through Legate (upstream over %s) differs from the fixture directly:\n%s\nthrough Legate:\n%s",
					transport, diff, got.summary)
			}
			if transport == "stdio" {
				// The suite never closes its sessions: once they idle past
				// session_idle_timeout, no upstream process they caused remains.
				deadline := time.Now().Add(15 * time.Second)
				t.Logf("upstream processes right after the suite: %d", children(s.pid))
				for n := children(s.pid); n > 0; n = children(s.pid) {
					if time.Now().After(deadline) {
						t.Fatalf("%d upstream processes of legate (pid %d) remain after the suite's sessions went idle", n, s.pid)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		})
	}
}

// children counts the live child processes of pid.
func children(pid int) int {
	dirs, _ := os.ReadDir("/proc")
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its ")".
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// directBaseline caches the suite's result against the fixture directly, once per test run.
var directBaseline struct {
	mu     sync.Mutex
	done   bool
	result *conformanceResult
	err    error
}

// directConformance runs the suite against the fixture over stateful HTTP, without Legate, the
// first time it is called in this run, and returns that result every time. The baseline must
// match wantDirectPassed/wantDirectFailed, else the fixture or the suite is not what these
// tests expect, and comparing with it would prove nothing.
func directConformance(t *testing.T, p *peerSet, bin string) (*conformanceResult, error) {
	t.Helper()
	directBaseline.mu.Lock()
	defer directBaseline.mu.Unlock()
	if !directBaseline.done {
		directBaseline.result, directBaseline.err = runDirectConformance(t, p, bin)
		directBaseline.done = true
	}
	return directBaseline.result, directBaseline.err
}

func runDirectConformance(t *testing.T, p *peerSet, bin string) (*conformanceResult, error) {
	t.Helper()
	fx := fixtureHTTP(t, bin)
	defer fx.stop()
	r, err := runConformance(t, p, fmt.Sprintf("http://localhost:%d/mcp", fx.port))
	if err != nil {
		return nil, fmt.Errorf("the fixture directly: %w", err)
	}
	if r.passed != wantDirectPassed || r.failed != wantDirectFailed {
		return nil, fmt.Errorf("conformance --suite active against go-sdk's everything-server directly: %d passed, %d failed, want %d passed, %d failed:\n%s",
			r.passed, r.failed, wantDirectPassed, wantDirectFailed, r.summary)
	}
	return r, nil
}

// conformanceResult is what "conformance server --suite active" reported.
type conformanceResult struct {
	passed, failed int
	scenarios      map[string]string // scenario -> "✓ 1 passed, 0 failed"
	errors         map[string]string // failed scenario -> the failed checks' error messages
	summary        string            // the summary lines of its output
}

var (
	totalLine    = regexp.MustCompile(`(?m)^Total: (\d+) passed, (\d+) failed`)
	scenarioLine = regexp.MustCompile(`(?m)^([✓✗]) ([A-Za-z0-9_.-]+): (\d+ passed, \d+ failed)`)
)

// runConformance runs the active server scenarios against url (a localhost URL, as the
// DNS-rebinding scenario needs) and parses the summary. A run with failed checks (exit 1) is a
// result; output without a "Total:" line is an error.
func runConformance(t *testing.T, p *peerSet, url string) (*conformanceResult, error) {
	t.Helper()
	return runSuite(t, p, p.conformance, url, true, "--suite", "active")
}

// runSuite runs the conformance suite at script against url with args (what to run). With
// scoredAll, every failed check counts for the exit status; a run of a revision's requirements
// exits 0 when only unscored scenarios (extensions, pending) fail.
func runSuite(t *testing.T, p *peerSet, script, url string, scoredAll bool, args ...string) (*conformanceResult, error) {
	t.Helper()
	dir := t.TempDir()
	stdout, stderr, err := p.runNode(t, dir, nil, append([]string{script, "server", "--url", url, "-o", dir}, args...)...)
	out := string(stdout)
	total := totalLine.FindStringSubmatch(out)
	if total == nil {
		return nil, fmt.Errorf("conformance server --url %s --suite active: no %q line (%v)\nstdout:\n%s\nstderr:\n%s", url, "Total: N passed, M failed", err, stdout, stderr)
	}
	r := &conformanceResult{scenarios: map[string]string{}, errors: map[string]string{}}
	r.passed, _ = strconv.Atoi(total[1])
	r.failed, _ = strconv.Atoi(total[2])
	var summary []string
	for _, m := range scenarioLine.FindAllStringSubmatch(out, -1) {
		r.scenarios[m[2]] = m[1] + " " + m[3]
		summary = append(summary, m[0])
		if m[1] == "✗" {
			r.errors[m[2]] = failedChecks(dir, m[2])
		}
	}
	r.summary = strings.Join(append(summary, total[0]), "\n")
	if len(r.scenarios) == 0 {
		return nil, fmt.Errorf("conformance server --url %s: no scenario lines\nstdout:\n%s\nstderr:\n%s", url, stdout, stderr)
	}
	if scoredAll && (err != nil) != (r.failed > 0) {
		return nil, fmt.Errorf("conformance server --url %s: exit %v does not match %q\nstdout:\n%s\nstderr:\n%s", url, err, total[0], stdout, stderr)
	}
	return r, nil
}

// failedChecks reads the checks.json that "-o dir" wrote for scenario and returns the error
// messages of its failed checks.
func failedChecks(dir, scenario string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "server-"+scenario+"-*", "checks.json"))
	var msgs []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		if json.Unmarshal(raw, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c.Status != "SUCCESS" && c.Status != "INFO" {
				msgs = append(msgs, fmt.Sprintf("%s %s: %s", c.ID, c.Status, c.ErrorMessage))
			}
		}
	}
	return strings.Join(msgs, "; ")
}

// diff describes how got differs from r (the baseline), or returns "".
func (r *conformanceResult) diff(got *conformanceResult) string {
	var lines []string
	if r.passed != got.passed || r.failed != got.failed {
		lines = append(lines, fmt.Sprintf("  Total: directly %d passed, %d failed; through Legate %d passed, %d failed",
			r.passed, r.failed, got.passed, got.failed))
	}
	names := slices.Sorted(maps.Keys(r.scenarios))
	for _, n := range slices.Sorted(maps.Keys(got.scenarios)) {
		if _, ok := r.scenarios[n]; !ok {
			names = append(names, n)
		}
	}
	for _, n := range names {
		want, ok1 := r.scenarios[n]
		have, ok2 := got.scenarios[n]
		if ok1 && ok2 && want == have {
			continue
		}
		if !ok1 {
			want = "(not run)"
		}
		if !ok2 {
			have = "(not run)"
		}
		line := fmt.Sprintf("  %s: directly %s; through Legate %s", n, want, have)
		if e := got.errors[n]; e != "" {
			line += " — " + e
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
