package e2e_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// wantDirect2026 is how many scenarios the 2026-07-28 requirements score that go-sdk's
// everything-server passes directly when stateless, as a 2026-07-28 client uses it: all but the
// tasks-* family, which the SDK does not implement. With sessions it passes only the few a
// 2026-07-28 client can use without them.
const wantDirect2026 = 41

// namedByServer is, for the upstream with sessions, the one check that names an input request
// by the server's own key, and the error it fails with: such a server asks by a request in the
// middle of the call, which carries no key, and Legate names it by one of its own. The scenario
// must fail by that check alone.
var namedByServer = map[string]string{
	"input-required-result-basic-elicitation": `sep-2322-elicitation-incomplete FAILURE: inputRequests missing expected key "user_name"`,
}

// TestUpstreamConformance2026: the conformance suite's 2026-07-28 requirements through Legate,
// with go-sdk's everything-server as its one transparent upstream (prefix: false), stateless and
// with sessions. Either way, every scenario the server passes directly when stateless passes
// through Legate too: what the server offers a 2026-07-28 client, as a client would compare. That
// includes the multi-round-trip ones (input-required-result-*: a result of type input_required,
// answered by the client's retry with inputResponses and requestState), which the server with
// sessions asks for by requests in the middle of the call, on its session with Legate: Legate
// holds the call and asks the client by input_required.
func TestUpstreamConformance2026(t *testing.T) {
	p := need(t)
	t.Parallel()
	bin, err := fixtureBin()
	if err != nil {
		t.Fatal(err)
	}
	stateless := fixtureHTTPMode(t, bin, true)
	direct, err := runSuite(t, p, p.conformance2026, fmt.Sprintf("http://localhost:%d/mcp", stateless.port), false, "--requirements", "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	if n := passing(direct); n != wantDirect2026 {
		t.Fatalf("the fixture, stateless, directly passes %d scenarios, want %d: the fixture or the suite is not what this test expects\n%s", n, wantDirect2026, direct.summary)
	}
	for _, sessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", !sessions), func(t *testing.T) {
			t.Parallel()
			fx := stateless
			if sessions {
				fx = fixtureHTTPMode(t, bin, false)
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
				if want := namedByServer[name]; sessions && want != "" && got.errors[name] == want {
					t.Logf("%s: through Legate %s: %s (the server's key for an input request is not on the wire of a session)", name, got.scenarios[name], want)
					continue
				}
				lost = append(lost, fmt.Sprintf("  %s: directly (stateless) %s; through Legate %s %s", name, direct.scenarios[name], got.scenarios[name], got.errors[name]))
			}
			t.Logf("2026-07-28 requirements: the fixture passes %d directly (stateless), %d through Legate", passing(direct), passing(got))
			if len(lost) > 0 {
				t.Errorf("scenarios the fixture passes directly (stateless) but not through Legate:\n%s", strings.Join(lost, "\n"))
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
