package main

import (
	"strings"
	"testing"
)

func TestToolsSearch(t *testing.T) {
	state := t.TempDir()
	out, err := runCLI(t, "tools", "search", "send", "an", "HTTP", "request", "--state-dir", state)
	if err != nil || !strings.HasPrefix(strings.SplitN(out, "\n", 3)[1], "http__request ") {
		t.Fatalf("tools search: %v\n%s", err, out)
	}
	out, err = runCLI(t, "tools", "search", "approval", "--class", "read", "--state-dir", state, "-o", "json")
	if err != nil || !strings.Contains(out, `"canonical": "legate.approval_status"`) || !strings.Contains(out, `"input_schema"`) {
		t.Fatalf("tools search -o json: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "tools", "search", "x", "--class", "huge", "--state-dir", state); err == nil || !strings.Contains(err.Error(), "class") {
		t.Fatalf("a bad class: %v", err)
	}
}
