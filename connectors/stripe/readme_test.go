package stripe_test

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// The README's config table is the spec's (go test -update rewrites it),
// it names every credential, and the sample config builds.
func TestReadme(t *testing.T) { connectortest.Readme(t, "stripe", *update) }

// Every tool the README's task table names is in the catalog and has a
// case run against the stand-in, and every tool of the catalog is named.
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
	for _, tool := range catalogOf(t, build(t, newFront(t), "stripe", "")) {
		tools[tool.Name] = false
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
			if _, ok := tools[m[1]]; !ok {
				t.Errorf("task %q: %s is not a tool of the catalog", cells[1], m[1])
			} else if toolCases[m[1]] == nil {
				t.Errorf("task %q: %s has no case in toolCases", cells[1], m[1])
			}
			tools[m[1]] = true
		}
	}
	for name, named := range tools {
		if !named {
			t.Errorf("tool %s is in no task of the README", name)
		}
	}
	if rows < len(tools) {
		t.Fatalf("%d tasks for %d tools", rows, len(tools))
	}
}

func yamlNode(t *testing.T, cfg string) *yaml.Node {
	t.Helper()
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(cfg), &node); err != nil {
		t.Fatal(err)
	}
	return &node
}
