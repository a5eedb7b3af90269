package slack_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

// Every tool the README's "What people ask" table names exists in the
// catalog and has a case in TestEveryToolDoesItsTask.
func TestReadmeTasks(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## What people ask")
	table, _, _ = strings.Cut(table, "\n## ")
	if !ok {
		t.Fatal("README.md has no table of what people ask")
	}
	f := newFixture(t, 2, "")
	names := map[string]bool{}
	for _, tool := range f.in.c.(connectors.ToolCatalog).ToolCatalog() {
		names[tool.Name] = true
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), `"`) {
			continue
		}
		rows++
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(cells[2], -1) {
			if !names[m[1]] {
				t.Errorf("row %q names %s, which the catalog lacks", strings.TrimSpace(cells[1]), m[1])
			}
			if _, ok := f.cases[m[1]]; !ok {
				t.Errorf("row %q: %s has no case", strings.TrimSpace(cells[1]), m[1])
			}
		}
	}
	if rows < 13 {
		t.Fatalf("%d rows; the brief's tasks are 13 at least", rows)
	}
}
