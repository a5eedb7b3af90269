package google_test

import (
	"flag"
	"github.com/legate-mcp/legate/connectors/google/calendar"
	"github.com/legate-mcp/legate/connectors/google/gmail"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// The README's config table is the spec's (go test -update rewrites it),
// it names every credential, and the sample config builds.
func TestReadme(t *testing.T) { connectortest.Readme(t, "google", *update) }

// Every tool the README's task table names is in the catalog and has a
// case, run here against the stand-in.
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
	for _, tool := range build(t, newStandin(t), "google", "toolsets: [all]").c.Tools() {
		if tool.Toolset != gmail.Toolset && tool.Toolset != calendar.Toolset { // their own README's
			tools[tool.Name] = true
		}
	}
	rows := 0
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		rows++
		// The tools, not the arguments in parentheses after them.
		named := regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(cells[2], ""), -1)
		if len(named) == 0 {
			t.Errorf("task %q names no tool", cells[1])
		}
		for _, m := range named {
			tc := toolCases[m[1]]
			if !tools[m[1]] || tc == nil {
				t.Errorf("task %q: %s is not a tool of the catalog with a case", cells[1], m[1])
				continue
			}
			t.Run(m[1], func(t *testing.T) {
				s := newStandin(t)
				tc(t, s, build(t, s, "google", ""))
			})
		}
	}
	if rows < len(tools) {
		t.Fatalf("%d tasks for %d tools", rows, len(tools))
	}
}
