package e2e_test

import (
	"strings"
	"testing"
)

// zeroConfigScenarios are the conformance suite's active server scenarios that need no fixture
// upstream (the others call test_simple_text, test://static-text and the like).
var zeroConfigScenarios = []string{
	"server-initialize", "ping", "tools-list", "dns-rebinding-protection",
	"logging-set-level", "server-sse-multiple-streams", "resources-list", "prompts-list",
}

// TestConformance runs scenarios of the official MCP conformance suite against "legate serve"
// with no config. The URL names localhost, as the DNS-rebinding scenario needs.
func TestConformance(t *testing.T) {
	p := need(t)
	s := serve(t, "")
	for _, scenario := range zeroConfigScenarios {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir()
			stdout, stderr, err := p.runNode(t, dir, nil, p.conformance, "server",
				"--url", s.url("localhost"), "--scenario", scenario, "-o", dir)
			if err != nil || !strings.Contains(string(stdout), ", 0 failed") {
				t.Errorf("conformance server --scenario %s: %v\n%s%s", scenario, err, stdout, stderr)
			} else {
				t.Logf("%s", stdout)
			}
		})
	}
}
