package email_test

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// The README's config table is the spec's (go test -update rewrites it),
// it names every credential, and the sample config builds.
func TestReadme(t *testing.T) { connectortest.Readme(t, "email", *update) }

// Every tool the README's task table names is in the catalog and has a
// case run against the stand-in.
func TestReadmeTasks(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| what people ask | tool |")
	if !ok {
		t.Fatal("README.md has no task table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	tools := map[string]bool{}
	for _, tool := range build(t, newStandin(t), "email", "").c.(connectors.ToolCatalog).ToolCatalog() {
		tools[tool.Name] = true
	}
	rows, named := 0, map[string]bool{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		rows++
		// The tools, not the arguments in parentheses after them.
		found := regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(cells[2], ""), -1)
		if len(found) == 0 {
			t.Errorf("task %q names no tool", cells[1])
		}
		for _, m := range found {
			named[m[1]] = true
			if !tools[m[1]] {
				t.Errorf("task %q: %s is not a tool of the catalog", cells[1], m[1])
			} else if toolCases[m[1]] == nil {
				t.Errorf("task %q: %s has no case in toolCases", cells[1], m[1])
			}
		}
	}
	for tool := range tools {
		if !named[tool] {
			t.Errorf("no task names %s", tool)
		}
	}
	if rows < 10 {
		t.Fatalf("%d tasks", rows)
	}
}
