package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestClientSnippets: each snippet of README.md and docs/*.md (the client snippets live in
// docs/clients.md) marked "<!-- snippet: SCRIPT -->" holds, in order, the lines of that script's
// "// snippet" … "// end snippet" region (compared trimmed, without a leading const or let; a
// line ending in "// (option)" sets an option the document shows as a comment), and every script
// with such a region has its snippet in exactly one document. Needs no peers.
func TestClientSnippets(t *testing.T) {
	blocks := map[string][]string{} // script -> the document's lines
	where := map[string]string{}    // script -> the document holding its snippet
	for _, rel := range docFiles(t) {
		doc, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(doc), "\n")
		for i := 0; i < len(lines); i++ {
			script, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "<!-- snippet: ")
			if !ok {
				continue
			}
			script = strings.TrimSuffix(script, " -->")
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
				t.Fatalf("%s:%d: snippet %s: no code block on the next line", rel, i+1, script)
			}
			if other, dup := where[script]; dup {
				t.Errorf("%s:%d: snippet %s is in %s too", rel, i+1, script, other)
			}
			var block []string
			for i += 2; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				block = append(block, snippetLine(lines[i]))
			}
			blocks[script], where[script] = block, rel
		}
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
			t.Errorf("%s has a snippet of %s, which marks none", where[name], name)
		case len(want) > 0 && !ok:
			t.Errorf("no document has a <!-- snippet: %s --> block", name)
		case len(want) > 0:
			rest := block
			for _, w := range want {
				i := slices.Index(rest, w)
				if i < 0 {
					t.Errorf("%s's snippet of %s lacks, in order, the line %q", where[name], name, w)
					break
				}
				rest = rest[i+1:]
			}
		}
		delete(blocks, name)
	}
	for name := range blocks {
		t.Errorf("%s has a snippet of %s, which is not a client script", where[name], name)
	}
}

func snippetLine(s string) string {
	s = strings.TrimSpace(s)
	for _, kw := range []string{"const ", "let "} {
		s = strings.TrimPrefix(s, kw)
	}
	return s
}
