package host_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// workspace makes a workspace and a gateway serving it; extra is more host
// config.
func workspace(t *testing.T, extra string) (string, *gateway) {
	t.Helper()
	ws := t.TempDir()
	return ws, newGateway(t, "workspace_root: "+ws+"\nskills_dir: "+t.TempDir()+"\n"+extra)
}

func TestFileTools(t *testing.T) {
	ws, g := workspace(t, "")
	cs := g.connect(t, nil)

	w := ok(t, cs, "fs_write", map[string]any{"path": "pkg/a/a_test.go", "content": "package a\n\nfunc TestA() {}\nline four\n"})
	if w["created"] != true || w["bytes"].(float64) != 37 {
		t.Fatalf("fs_write: %v", w)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "pkg/a/a_test.go")); !strings.HasPrefix(string(b), "package a") {
		t.Fatalf("file on disk: %q", b)
	}
	ok(t, cs, "fs_write", map[string]any{"path": filepath.Join(ws, "pkg/b.go"), "content": "package pkg // TODO one\n// TODO two\n"})

	r := ok(t, cs, "fs_read", map[string]any{"path": "pkg/a/a_test.go", "offset": 3, "limit": 1})
	if r["content"] != "     3\tfunc TestA() {}\n" || r["start_line"].(float64) != 3 || r["end_line"].(float64) != 3 {
		t.Fatalf("fs_read slice: %v", r)
	}

	l := ok(t, cs, "fs_list", map[string]any{"depth": 1})
	if got := paths(l); !slices.Equal(got, []string{"pkg"}) {
		t.Fatalf("fs_list depth 1: %v", got)
	}
	l = ok(t, cs, "fs_list", map[string]any{"path": "pkg", "depth": 3})
	if got := paths(l); !slices.Equal(got, []string{"pkg/a", "pkg/a/a_test.go", "pkg/b.go"}) {
		t.Fatalf("fs_list depth 3: %v", got)
	}

	gl := ok(t, cs, "fs_glob", map[string]any{"pattern": "**/*_test.go"})
	if got := paths(gl); !slices.Equal(got, []string{"pkg/a/a_test.go"}) {
		t.Fatalf("fs_glob: %v", got)
	}

	gr := ok(t, cs, "fs_grep", map[string]any{"pattern": `TODO \w+`, "glob": "**/*.go"})
	if m := gr["matches"].([]any); len(m) != 2 || m[1].(map[string]any)["line"].(float64) != 2 {
		t.Fatalf("fs_grep: %v", gr)
	}

	if gr := ok(t, cs, "fs_grep", map[string]any{"pattern": "TODO", "path": "pkg/b.go"}); len(gr["matches"].([]any)) != 2 {
		t.Fatalf("fs_grep of one file: %v", gr)
	}
	if gl := ok(t, cs, "fs_glob", map[string]any{"pattern": "a/*.go", "path": filepath.Join(ws, "pkg")}); !slices.Equal(paths(gl), []string{"pkg/a/a_test.go"}) {
		t.Fatalf("fs_glob under an absolute path: %v", paths(gl))
	}
	if gl := ok(t, cs, "fs_glob", map[string]any{"pattern": "pkg/{a,c}/*.go"}); !slices.Equal(paths(gl), []string{"pkg/a/a_test.go"}) {
		t.Fatalf("fs_glob with alternatives: %v", paths(gl))
	}
	fails(t, cs, "fs_glob", map[string]any{"pattern": "pkg/[a"}, "INVALID_ARGUMENT")
	fails(t, cs, "fs_edit", map[string]any{"path": "pkg/b.go", "old_string": "TODO", "new_string": "DONE"}, "CONFLICT")
	fails(t, cs, "fs_edit", map[string]any{"path": "pkg/b.go", "old_string": "absent", "new_string": "x"}, "NOT_FOUND")
	fails(t, cs, "fs_edit", map[string]any{"path": "pkg/none.go", "old_string": "a", "new_string": "x"}, "NOT_FOUND")
	ok(t, cs, "fs_edit", map[string]any{"path": "pkg/b.go", "old_string": "TODO two", "new_string": "DONE two"})
	if b, _ := os.ReadFile(filepath.Join(ws, "pkg/b.go")); string(b) != "package pkg // TODO one\n// DONE two\n" {
		t.Fatalf("after fs_edit: %q", b)
	}

	fails(t, cs, "fs_delete", map[string]any{"path": "pkg/a"}, "CONFLICT") // not empty
	ok(t, cs, "fs_delete", map[string]any{"path": "pkg/a/a_test.go"})
	ok(t, cs, "fs_delete", map[string]any{"path": "pkg/a"})
	if _, err := os.Stat(filepath.Join(ws, "pkg/a")); !os.IsNotExist(err) {
		t.Fatalf("pkg/a still there: %v", err)
	}
	fails(t, cs, "fs_delete", map[string]any{"path": "."}, "INVALID_ARGUMENT")
	fails(t, cs, "fs_read", map[string]any{"path": "missing"}, "NOT_FOUND")
}

// Every result is capped, and says so.
func TestOutputCapped(t *testing.T) {
	ws, g := workspace(t, "max_tool_output_bytes: 2048\nmax_file_bytes: 65536")
	cs := g.connect(t, nil)
	big := strings.Repeat("0123456789 match\n", 1000) // 17000 bytes
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string]map[string]any{
		"fs_read": {"path": "big.txt"},
		"fs_grep": {"pattern": "match"},
	} {
		o := call(t, cs, name, args)
		if o.isError || o.data["truncated"] != true || len(o.text) > 2048+256 {
			t.Errorf("%s: error=%v truncated=%v, %d bytes of text", name, o.isError, o.data["truncated"], len(o.text))
		}
	}
	fails(t, cs, "fs_write", map[string]any{"path": "x", "content": strings.Repeat("x", 70000)}, "INVALID_ARGUMENT")
	if err := os.WriteFile(filepath.Join(ws, "huge.txt"), []byte(strings.Repeat("match\n", 20000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if o := ok(t, cs, "fs_grep", map[string]any{"pattern": "match", "glob": "huge.txt"}); o["skipped_large"].(float64) != 1 {
		t.Errorf("a file over max_file_bytes is not reported skipped: %v", o)
	}
}

func paths(res map[string]any) []string {
	var out []string
	for _, e := range res["entries"].([]any) {
		out = append(out, e.(map[string]any)["path"].(string))
	}
	slices.Sort(out)
	return out
}
