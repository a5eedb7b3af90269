//go:build unix

// The jail's guarantees (symlinked roots, FIFOs, hard-link counts) are the
// unix ones; elsewhere links reports no count and there is no mkfifo.

package workspace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/host/workspace"
)

// code is err's canonical code, failing the test when err is none.
func code(t *testing.T, err error) legate.Code {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) {
		t.Fatalf("want a *legate.Error, got %T: %v", err, err)
	}
	return le.Code
}

// newJail is a jail on a fresh directory, by its real path, open.
func newJail(t *testing.T) (*workspace.Jail, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	j := workspace.New(ws)
	if _, err := j.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, ws
}

func TestRel(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	alias := filepath.Join(dir, "alias")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	j := workspace.New(alias + "/")
	if _, err := j.Open(); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if j.Path() != alias || j.Real() != real {
		t.Fatalf("Path %q, Real %q; want %q, %q", j.Path(), j.Real(), alias, real)
	}
	for _, p := range []string{alias + "/sub/f.txt", real + "/sub/f.txt", alias + "/sub/../sub/f.txt", "sub/f.txt"} {
		r, err := j.Rel(p)
		if err != nil || r != "sub/f.txt" {
			t.Errorf("Rel(%q) = %q, %v; want sub/f.txt", p, r, err)
		}
	}
	if r, err := j.Rel(alias); err != nil || r != "." {
		t.Errorf("Rel of the root = %q, %v; want .", r, err)
	}
	for _, p := range []string{"/etc/passwd", dir, alias + "x/f.txt", real + "/../other", alias + "/../alias2/f"} {
		r, err := j.Rel(p)
		if err == nil {
			t.Errorf("Rel(%q) = %q, accepted; want it refused", p, r)
			continue
		}
		if c := code(t, err); c != legate.CodePermissionDenied || !strings.Contains(err.Error(), "is outside the workspace") {
			t.Errorf("Rel(%q): %v (%s); want PERMISSION_DENIED, outside the workspace", p, err, c)
		}
	}
	for _, p := range []string{"a\x00b", "\xff"} {
		if _, err := j.Rel(p); err == nil || code(t, err) != legate.CodeInvalidArgument {
			t.Errorf("Rel(%q): %v; want INVALID_ARGUMENT", p, err)
		}
	}
	if !j.Inside(real+"/x") || !j.Inside(alias) || j.Inside(dir) {
		t.Errorf("Inside: real/x %v, alias %v, its parent %v; want true, true, false", j.Inside(real+"/x"), j.Inside(alias), j.Inside(dir))
	}
}

// A FIFO planted in the workspace does not hold OpenRead.
func TestOpenReadFIFO(t *testing.T) {
	j, ws := newJail(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		f, _, err := j.OpenRead("fifo")
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || code(t, err) != legate.CodeInvalidArgument || !strings.Contains(err.Error(), "host: fifo is not a regular file") {
			t.Fatalf("OpenRead of a FIFO: %v; want INVALID_ARGUMENT, not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenRead of a FIFO is still blocked after 5s")
	}
}

// A file with another name, outside the workspace, is refused for writing.
func TestOpenWriteHardLink(t *testing.T) {
	j, ws := newJail(t)
	in := filepath.Join(ws, "f.txt")
	if err := os.WriteFile(in, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, created, err := j.OpenWrite("f.txt", "f.txt", os.O_WRONLY)
	if err != nil || created {
		t.Fatalf("OpenWrite of a plain file: created %v, %v", created, err)
	}
	f.Close()
	f, created, err = j.OpenWrite("new.txt", "new.txt", os.O_WRONLY|os.O_CREATE)
	if err != nil || !created {
		t.Fatalf("OpenWrite of a new file: created %v, %v", created, err)
	}
	f.Close()
	if err := os.Link(in, filepath.Join(filepath.Dir(ws), "outside.txt")); err != nil {
		t.Skipf("link: %v", err)
	}
	f, _, err = j.OpenWrite("f.txt", "f.txt", os.O_WRONLY)
	if err == nil {
		f.Close()
		t.Fatal("OpenWrite of a file with 2 hard links succeeded")
	}
	if c := code(t, err); c != legate.CodePermissionDenied || !strings.Contains(err.Error(), "host: f.txt has 2 hard links") {
		t.Fatalf("OpenWrite of a file with 2 hard links: %v (%s); want PERMISSION_DENIED, 2 hard links", err, c)
	}
	if b, _ := os.ReadFile(in); string(b) != "kept" {
		t.Fatalf("the file changed: %q", b)
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false},
		{"/a/b", "/a", false},
		{"/", "/a", true},
	} {
		if got := workspace.Within(c.dir, c.p); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.dir, c.p, got, c.want)
		}
	}
}

func TestFSError(t *testing.T) {
	_, err := os.Open(filepath.Join(t.TempDir(), "missing"))
	got := workspace.FSError("read", "missing", err)
	if code(t, got) != legate.CodeNotFound || !strings.HasSuffix(got.Error(), "host: read missing: no such file or directory") {
		t.Errorf("FSError of a missing file: %v", got)
	}
	le := legate.Errorf(legate.CodeConflict, "as it was")
	if workspace.FSError("write", "x", le) != le {
		t.Error("FSError rewrote a canonical error")
	}
}
