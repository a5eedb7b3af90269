package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClientSnippets: each README snippet marked "<!-- snippet: SCRIPT -->" holds, in order, the
// lines of that script's "// snippet" … "// end snippet" region (compared trimmed, without a
// leading const or let; a line ending in "// (option)" sets an option the README shows as a
// comment), and every script with such a region has its snippet in the README. Needs no peers.
func TestClientSnippets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string][]string{} // script -> README lines
	lines := strings.Split(string(readme), "\n")
	for i := 0; i < len(lines); i++ {
		script, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "<!-- snippet: ")
		if !ok {
			continue
		}
		script = strings.TrimSuffix(script, " -->")
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Fatalf("README.md:%d: snippet %s: no code block on the next line", i+1, script)
		}
		var block []string
		for i += 2; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			block = append(block, snippetLine(lines[i]))
		}
		blocks[script] = block
	}
	scripts, err := filepath.Glob(filepath.Join("node", "clients", "*.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range scripts {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		in := false
		for line := range strings.Lines(string(raw)) {
			switch l := strings.TrimSpace(line); {
			case l == "// snippet":
				in = true
			case l == "// end snippet":
				in = false
			case in && l != "" && !strings.HasSuffix(l, "// (option)"):
				want = append(want, snippetLine(l))
			}
		}
		name := "e2e/node/clients/" + filepath.Base(path)
		block, ok := blocks[name]
		switch {
		case len(want) == 0 && ok:
			t.Errorf("README.md has a snippet of %s, which marks none", name)
		case len(want) > 0 && !ok:
			t.Errorf("README.md has no <!-- snippet: %s --> block", name)
		case len(want) > 0:
			rest := block
			for _, w := range want {
				i := slices.Index(rest, w)
				if i < 0 {
					t.Errorf("README.md's snippet of %s lacks, in order, the line %q", name, w)
					break
				}
				rest = rest[i+1:]
			}
		}
		delete(blocks, name)
	}
	for name := range blocks {
		t.Errorf("README.md has a snippet of %s, which is not a client script", name)
	}
}

func snippetLine(s string) string {
	s = strings.TrimSpace(s)
	for _, kw := range []string{"const ", "let "} {
		s = strings.TrimPrefix(s, kw)
	}
	return s
}
