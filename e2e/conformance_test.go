package e2e_test

import (
	"testing"
)

// TestConformance runs scenarios of the official MCP conformance suite against "legate serve"
// with no config. The URL names localhost, as the DNS-rebinding scenario needs.
func TestConformance(t *testing.T) {
	p := need(t)
	s := serve(t, "")
	for _, scenario := range []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"} {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir()
			stdout, stderr, err := p.runNode(t, dir, nil, p.conformance, "server",
				"--url", s.url("localhost"), "--scenario", scenario, "-o", dir)
			if err != nil {
				t.Errorf("conformance server --scenario %s: %v\n%s%s", scenario, err, stdout, stderr)
			} else {
				t.Logf("%s", stdout)
			}
		})
	}
}
