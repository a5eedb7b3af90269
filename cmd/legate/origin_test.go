package main

import (
	"encoding/json"
	"regexp"
	"testing"
)

// A stored instance's source, as tools list shows it, reads without
// parentheses inside parentheses.
func TestToolSourceOfAStoredInstanceNestsNoParentheses(t *testing.T) {
	flags := []string{"--state-dir", t.TempDir(), "--config", writeConfig(t, "log_level: warn\n")}
	if out, err := runCLI(t, append([]string{"connector", "add", "web", "--type", "http", "--set", "base_url=https://api.example.com/"}, flags...)...); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err := runCLI(t, append([]string{"tools", "list", "-o", "json"}, flags...)...)
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	var rows []struct{ Canonical, Source string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := regexp.MustCompile(`^connector "web" \(the store, added \d{4}-\d\d-\d\d \d\d:\d\d\)$`)
	for _, r := range rows {
		if r.Canonical == "web.call" {
			if !want.MatchString(r.Source) {
				t.Fatalf("source %q, want it to match %s", r.Source, want)
			}
			return
		}
	}
	t.Fatalf("no web.call in %s", out)
}
