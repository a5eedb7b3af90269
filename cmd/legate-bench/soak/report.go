package soak

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// soakKinds are what a soak call asks of the upstream, in report order.
var soakKinds = []string{"call", faultError, faultHang, faultDrop, keepAliveKind}

// tally counts the soak's calls by what they asked for and how they ended.
type tally struct {
	mu         sync.Mutex
	asked      map[string]int
	unexpected map[string]int
	// why counts unexpected outcomes by their text, ids taken out.
	why map[string]int
}

// record counts one call; outcome is classify's.
func (t *tally) record(kind, outcome string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.asked == nil {
		t.asked, t.unexpected, t.why = map[string]int{}, map[string]int{}, map[string]int{}
	}
	t.asked[kind]++
	if outcome != "" {
		t.unexpected[kind]++
		t.why[kind+" → "+callIDs.ReplaceAllString(outcome, "…")]++
	}
}

// callIDs are the parts of a call's text that name it.
var callIDs = regexp.MustCompile(`w\d+ s\d+ c\d+`)

// total counts the calls, the keep-alive ones apart.
func (t *tally) total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.asked {
		if k != keepAliveKind {
			n += v
		}
	}
	return n
}

func (t *tally) unexpectedTotal() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, v := range t.unexpected {
		n += v
	}
	return n
}

// minRSSTolerance is the least RSS growth the soak allows: on a small run
// the runtime's and SQLite's caches alone vary by about that much.
const minRSSTolerance = 16 << 20

// report prints the soak's outcomes and measurements and judges them.
func report(w io.Writer, warm, t *tally, cold soakSnap, snaps []soakSnap, c *Config) error {
	printOutcomes(w, warm, t)
	printSnaps(w, append([]soakSnap{cold}, snaps...))
	return judge(w, warm, t, snaps[0], snaps[len(snaps)-1], c)
}

// printOutcomes prints the calls by what they asked for and how they
// ended, then each unexpected outcome with its count.
func printOutcomes(w io.Writer, warm, t *tally) {
	expect := map[string]string{
		"call":        "the echo",
		keepAliveKind: "the echo",
		faultError:    "isError, the tool's text",
		faultHang:     "isError, TIMEOUT",
		faultDrop:     "isError, UPSTREAM_UNAVAILABLE",
	}
	fmt.Fprintln(w, "| calls that asked for | calls | ended as expected | expected | unexpected |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|")
	for _, k := range soakKinds {
		fmt.Fprintf(w, "| %s | %d | %d | %s | %d |\n", k, t.asked[k], t.asked[k]-t.unexpected[k], expect[k], t.unexpected[k])
	}
	fmt.Fprintf(w, "| all but keep-alive (warm-up not counted: %d calls, %d unexpected) | %d | %d | | %d |\n\n",
		warm.total(), warm.unexpectedTotal(), t.total(), t.total()-(t.unexpectedTotal()-t.unexpected[keepAliveKind]), t.unexpectedTotal()-t.unexpected[keepAliveKind])
	for _, tt := range []*tally{warm, t} {
		for _, k := range slices.Sorted(maps.Keys(tt.why)) {
			fmt.Fprintf(w, "unexpected ×%d: %s\n", tt.why[k], k)
		}
	}
	if len(warm.why)+len(t.why) > 0 {
		fmt.Fprintln(w)
	}
}

// printSnaps prints what Legate held at each measurement.
func printSnaps(w io.Writer, snaps []soakSnap) {
	fmt.Fprintln(w, "| Legate | goroutines | open files | connections to the upstream | goroutines, files net of them | RSS | heap in use | circuit left open by the last calls |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|")
	for _, s := range snaps {
		g, f := s.pooled()
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d, %d | %.1f MiB | %.1f MiB | %s |\n", s.phase, s.goroutines, s.fds, s.upConns, g, f,
			float64(s.rss)/(1<<20), float64(s.heap)/(1<<20), map[bool]string{true: "yes (closed before measuring)", false: "no"}[s.circuitOpened])
	}
}

// judge checks the pass criteria, printing PASS or FAIL for each.
func judge(w io.Writer, warm, t *tally, before, after soakSnap, c *Config) error {
	g0, f0 := before.pooled()
	g1, f1 := after.pooled()
	var fails []string
	check := func(ok bool, format string, args ...any) {
		verdict := "PASS"
		if !ok {
			verdict = "FAIL"
			fails = append(fails, fmt.Sprintf(format, args...))
		}
		fmt.Fprintf(w, "%s  %s\n", verdict, fmt.Sprintf(format, args...))
	}
	fmt.Fprintln(w)
	check(t.unexpectedTotal()+warm.unexpectedTotal() == 0, "unexpected outcomes: %d (want 0)", t.unexpectedTotal()+warm.unexpectedTotal())
	check(g1 <= g0+c.tolGo, "goroutines, net of the upstream pool's, %d → %d (at most +%d)", g0, g1, c.tolGo)
	check(f1 <= f0+c.tolFDs, "open files, net of the upstream pool's, %d → %d (at most +%d)", f0, f1, c.tolFDs)
	allowed := max(float64(before.rss)*c.tolRSS, minRSSTolerance)
	check(float64(after.rss-before.rss) <= allowed, "RSS %.1f → %.1f MiB (at most +%.0f%%, and +%.0f MiB at least)",
		float64(before.rss)/(1<<20), float64(after.rss)/(1<<20), 100*c.tolRSS, float64(minRSSTolerance)/(1<<20))
	if len(fails) > 0 {
		return errors.New("soak failed: " + strings.Join(fails, "; "))
	}
	return nil
}
