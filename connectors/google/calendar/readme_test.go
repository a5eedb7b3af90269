package calendar_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every tool the README's task table names is a tool of the
// toolset with a case in toolCases, and every tool is named in its scope
// table.
func TestReadmeTasks(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| what people ask | tool |")
	if !ok {
		t.Fatal("README.md has no task table")
	}
	table, scopes, _ := strings.Cut(table, "\n\n")
	tools := map[string]bool{}
	for _, tool := range newEnv(t, newStandin(t), 1).tools {
		tools[tool.Name] = true
		if !strings.Contains(scopes, "`"+tool.Name+"`") {
			t.Errorf("%s has no scopes in README.md", tool.Name)
		}
	}
	named := map[string]bool{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(cells[2], ""), -1) {
			named[m[1]] = true
			if !tools[m[1]] || toolCases[m[1]] == nil {
				t.Errorf("task %q: %s is not a tool with a case", cells[1], m[1])
			}
		}
	}
	for tool := range tools {
		if !named[tool] {
			t.Errorf("no task names %s", tool)
		}
	}
}
