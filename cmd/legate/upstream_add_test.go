package main

import (
	"strings"
	"testing"
)

// An upstream that cannot be reached is not left in the store by a failed
// add; --no-refresh stores it without connecting.
func TestFailedUpstreamAddStoresNothing(t *testing.T) {
	state := t.TempDir()
	_, err := runCLI(t, "upstream", "add", "down", "--url", "http://127.0.0.1:1/mcp", "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), `upstream "down" not added`) {
		t.Fatalf("add of an unreachable upstream: %v", err)
	}
	if out, _ := runCLI(t, "upstream", "list", "--state-dir", state); strings.Contains(out, "down") {
		t.Fatalf("the failed upstream is listed:\n%s", out)
	}
	if out, err := runCLI(t, "upstream", "add", "down", "--url", "http://127.0.0.1:1/mcp", "--no-refresh", "--state-dir", state); err != nil || !strings.Contains(out, "not connected") {
		t.Fatalf("add --no-refresh: %v\n%s", err, out)
	}
	if out, _ := runCLI(t, "upstream", "list", "--state-dir", state); !strings.Contains(out, "down") {
		t.Fatalf("the upstream added with --no-refresh is not listed:\n%s", out)
	}
}
