package e2e_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// wantDirect2026 is how many scenarios the 2026-07-28 requirements score that go-sdk's
// everything-server passes directly: stateless, all but the tasks-* family, which the SDK does
// not implement; with sessions only, the few a 2026-07-28 client can use without them (through
// Legate, which translates, it passes more).
var wantDirect2026 = map[bool]int{true: 41, false: 7}

// TestUpstreamConformance2026: the conformance suite's 2026-07-28 requirements through Legate,
// with go-sdk's everything-server as its one transparent upstream (prefix: false), stateless and
// with sessions: every scenario the fixture passes directly passes through Legate too, the
// multi-round-trip ones (input-required-result-*: a result of type input_required, answered by
// the client's retry with inputResponses and requestState) included.
func TestUpstreamConformance2026(t *testing.T) {
	p := need(t)
	t.Parallel()
	bin, err := fixtureBin()
	if err != nil {
		t.Fatal(err)
	}
	for _, stateless := range []bool{true, false} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			t.Parallel()
			fx := fixtureHTTPMode(t, bin, stateless)
			direct, err := runSuite(t, p, p.conformance2026, fmt.Sprintf("http://localhost:%d/mcp", fx.port), false, "--requirements", "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			if n := passing(direct); n != wantDirect2026[stateless] {
				t.Fatalf("the fixture directly passes %d scenarios, want %d: the fixture or the suite is not what this test expects\n%s", n, wantDirect2026[stateless], direct.summary)
			}
			config := upstreamConfig(t, fmt.Sprintf("upstreams:\n  - id: conformance\n    url: http://127.0.0.1:%d/mcp\n    prefix: false\n", fx.port))
			state := t.TempDir()
			refreshUpstreams(t, config, state, "conformance")
			s := serveState(t, config, state)
			got, err := runSuite(t, p, p.conformance2026, s.url("localhost"), false, "--requirements", "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			var lost []string
			for _, name := range slices.Sorted(maps.Keys(direct.scenarios)) {
				if !strings.HasPrefix(direct.scenarios[name], "✓") || strings.HasPrefix(got.scenarios[name], "✓") {
					continue
				}
				lost = append(lost, fmt.Sprintf("  %s: directly %s; through Legate %s %s", name, direct.scenarios[name], got.scenarios[name], got.errors[name]))
			}
			t.Logf("2026-07-28 requirements: the fixture passes %d directly, %d through Legate", passing(direct), passing(got))
			if len(lost) > 0 {
				t.Errorf("scenarios the fixture passes directly but not through Legate:\n%s", strings.Join(lost, "\n"))
			}
		})
	}
}

// passing counts the scenarios r passed.
func passing(r *conformanceResult) int {
	n := 0
	for _, v := range r.scenarios {
		if strings.HasPrefix(v, "✓") {
			n++
		}
	}
	return n
}
