package conventions_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mapEntry is one line of the package map in docs/ARCHITECTURE.md:
// "- `path` — what it does", the module root's path written `legate`.
var mapEntry = regexp.MustCompile("^- `([^`]+)` — \\S")

// TestArchitectureNamesEveryPackage keeps docs/ARCHITECTURE.md's package
// map true: every package of the module has its line there, and every
// line names a package that exists.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	f, err := os.Open(filepath.Join(root(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	in := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if m := mapEntry.FindStringSubmatch(line); in && m != nil {
			if listed[m[1]] {
				t.Errorf("docs/ARCHITECTURE.md lists %s twice", m[1])
			}
			listed[m[1]] = true
		}
	}
	for _, p := range listPackages(t) {
		name := rel(p.ImportPath)
		if name == "" {
			name = "legate"
		}
		if !listed[name] {
			t.Errorf("docs/ARCHITECTURE.md does not list %s: add a line \"- `%s` — what it does\" to its package map", name, name)
		}
		delete(listed, name)
	}
	for name := range listed {
		t.Errorf("docs/ARCHITECTURE.md lists %s, which is no package of the module: remove its line", name)
	}
}
