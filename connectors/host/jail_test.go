package host_test

import (
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jailed is a workspace beside a directory outside it holding a canary
// file with a unique marker: a read that escaped would show the marker in
// a result, a write would change the snapshot of the outside directory.
type jailed struct {
	ws, outside, canary, marker string
	before                      string
	cs                          *mcp.ClientSession
}

func newJailed(t *testing.T) *jailed {
	t.Helper()
	base := t.TempDir()
	j := &jailed{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), marker: "CANARY-" + rand.Text()}
	j.canary = filepath.Join(j.outside, "canary.txt")
	for _, d := range []string{j.ws, j.outside, filepath.Join(j.ws, "inside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(j.canary, []byte(j.marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j.before = snapshot(t, j.outside)
	g := newGateway(t, "workspace_root: "+j.ws+"\nskills_dir: "+filepath.Join(base, "skills"))
	j.cs = g.connect(t, nil)
	return j
}

// snapshot describes every entry of dir: name, mode, size, content, mtime.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// check fails the test when the outside directory changed.
func (j *jailed) check(t *testing.T) {
	t.Helper()
	if now := snapshot(t, j.outside); now != j.before {
		t.Fatalf("the directory outside the workspace changed:\nbefore:\n%s\nafter:\n%s", j.before, now)
	}
}

// try calls a tool and fails the test when its result holds the marker.
func (j *jailed) try(t *testing.T, tool string, args map[string]any) outcome {
	t.Helper()
	o := call(t, j.cs, tool, args)
	if strings.Contains(o.text, j.marker) {
		t.Fatalf("%s %v read the canary outside the workspace", tool, args)
	}
	return o
}

// attack runs every file tool on p.
func (j *jailed) attack(t *testing.T, p string) []outcome {
	t.Helper()
	return []outcome{
		j.try(t, "fs_read", map[string]any{"path": p}),
		j.try(t, "fs_write", map[string]any{"path": p, "content": "overwritten"}),
		j.try(t, "fs_write", map[string]any{"path": p + "/new.txt", "content": "planted"}),
		j.try(t, "fs_edit", map[string]any{"path": p, "old_string": j.marker, "new_string": "edited"}),
		j.try(t, "fs_list", map[string]any{"path": p, "depth": 2}),
		j.try(t, "fs_glob", map[string]any{"path": p, "pattern": "**"}),
		j.try(t, "fs_grep", map[string]any{"path": p, "pattern": "CANARY"}),
	}
}

func TestJailEscapes(t *testing.T) {
	j := newJailed(t)
	rel := func(target string) string { r, _ := filepath.Rel(j.ws, target); return r }
	links := map[string]string{
		"lfile":      rel(j.canary),               // ../outside/canary.txt
		"lfileabs":   j.canary,                    // absolute
		"ldir":       rel(j.outside),              // ../outside
		"ldirabs":    j.outside,                   // absolute
		"ldangling":  rel(j.outside) + "/new.txt", // to a file not there yet
		"inside/up":  "../../outside",             // two levels from a subdirectory
		"lchain":     "lfile",                     // a link to a link that escapes
		"inside/dot": "../inside/../../outside/canary.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(j.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	escapes := []string{
		"../outside/canary.txt",
		"inside/../../outside/canary.txt",
		"./../outside",
		j.canary,
		j.outside,
		filepath.Join(j.ws, "..", "outside", "canary.txt"),
		"/etc/passwd",
		"lfile", "lfileabs", "ldir/canary.txt", "ldirabs/canary.txt", "ldangling",
		"inside/up/canary.txt", "lchain", "inside/dot",
	}
	for _, p := range escapes {
		t.Run(p, func(t *testing.T) {
			for i, o := range j.attack(t, p) {
				if !o.isError {
					t.Errorf("operation %d on %s succeeded: %s", i, p, o.text)
				}
			}
			j.check(t)
		})
	}
	// Deleting a link deletes the link, inside; ".." paths are refused.
	for name := range links {
		ok(t, j.cs, "fs_delete", map[string]any{"path": name})
	}
	for _, p := range escapes[:7] {
		if o := j.try(t, "fs_delete", map[string]any{"path": p}); !o.isError {
			t.Errorf("fs_delete %s succeeded", p)
		}
	}
	j.check(t)
}

// Paths that are malformed or merely unusual: refused or kept inside.
func TestJailOddPaths(t *testing.T) {
	j := newJailed(t)
	for name, p := range map[string]string{
		"NUL byte":              "inside/a\x00/../../outside/canary.txt",
		"very long path":        strings.Repeat("a/", 3000) + "x",
		"very long component":   strings.Repeat("b", 300),
		"long .. chain":         strings.Repeat("../", 200) + "outside/canary.txt",
		"division slash":        "..\u2215outside\u2215canary.txt",
		"fullwidth dots":        "\uff0e\uff0e/outside/canary.txt",
		"NFD name":              "cafe\u0301/../../outside/canary.txt",
		"one-dot leader":        "\u2024\u2024/outside/canary.txt",
		"invalid UTF-8":         "\xff\xfe/../../outside/canary.txt",
		"backslashes":           `..\outside\canary.txt`,
		"trailing slash escape": "../outside/",
	} {
		t.Run(name, func(t *testing.T) {
			j.attack(t, p)
			j.check(t)
		})
	}
	// A name in one Unicode normalization does not alias the other: NFC
	// café written, NFD café not found (compared byte for byte).
	ok(t, j.cs, "fs_write", map[string]any{"path": "caf\u00e9.txt", "content": "x"})
	fails(t, j.cs, "fs_read", map[string]any{"path": "cafe\u0301.txt"}, "NOT_FOUND")
}

// A symlink swapped between an inside directory and the outside one,
// as fast as a goroutine can, while the tools use paths through it: no
// interleaving of check and use lets a call out.
func TestJailSymlinkRace(t *testing.T) {
	j := newJailed(t)
	if err := os.WriteFile(filepath.Join(j.ws, "inside", "canary.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(j.ws, "in.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	swap := func(link string, targets ...string) {
		wg.Go(func() {
			tmp := filepath.Join(j.ws, "."+filepath.Base(link)+".tmp")
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				os.Remove(tmp)
				if err := os.Symlink(targets[i%len(targets)], tmp); err != nil {
					continue
				}
				os.Rename(tmp, filepath.Join(j.ws, link)) // atomic swap
			}
		})
	}
	swap("swapdir", "inside", "../outside")
	swap("swapfile", "in.txt", "../outside/canary.txt")
	const iterations = 200
	insideWrites := 0
	for i := range iterations {
		p := "swapdir/canary.txt"
		if i%2 == 1 {
			p = "swapfile"
		}
		j.try(t, "fs_read", map[string]any{"path": p})
		if o := j.try(t, "fs_write", map[string]any{"path": p, "content": fmt.Sprintf("write %d\n", i)}); !o.isError {
			insideWrites++
		}
		j.try(t, "fs_write", map[string]any{"path": "swapdir/new.txt", "content": "planted"})
		j.try(t, "fs_edit", map[string]any{"path": p, "old_string": j.marker, "new_string": "edited"})
		j.try(t, "fs_grep", map[string]any{"path": "swapdir", "pattern": "CANARY"})
		j.try(t, "fs_list", map[string]any{"path": "swapdir"})
		if i%10 == 0 {
			j.try(t, "fs_delete", map[string]any{"path": "swapdir/canary.txt"})
			os.WriteFile(filepath.Join(j.ws, "inside", "canary.txt"), []byte("inside\n"), 0o644)
		}
	}
	close(stop)
	wg.Wait()
	j.check(t)
	t.Logf("%d of %d writes through a swapped link landed inside; the others were refused", insideWrites, iterations)
}

// A hard link to an outside file is inside the tree: os.Root reads
// through it (the README says so). Legate refuses to write through a file
// with several links, and deleting removes only the name inside.
func TestJailHardLink(t *testing.T) {
	j := newJailed(t)
	hl := filepath.Join(j.ws, "hardlink.txt")
	if err := os.Link(j.canary, hl); err != nil {
		t.Skipf("no hard links across these directories: %v", err)
	}
	j.before = snapshot(t, j.outside) // the link count is part of the mode line only via ctime; content is what matters
	o := call(t, j.cs, "fs_read", map[string]any{"path": "hardlink.txt"})
	if o.isError || !strings.Contains(o.text, j.marker) {
		t.Fatalf("fs_read of a hard link: the documented behaviour is that it reads the shared file; got %s", o.text)
	}
	fails(t, j.cs, "fs_write", map[string]any{"path": "hardlink.txt", "content": "overwritten"}, "PERMISSION_DENIED")
	fails(t, j.cs, "fs_edit", map[string]any{"path": "hardlink.txt", "old_string": j.marker, "new_string": "x"}, "PERMISSION_DENIED")
	j.check(t)
	ok(t, j.cs, "fs_delete", map[string]any{"path": "hardlink.txt"})
	j.check(t)
	if _, err := os.Lstat(hl); !os.IsNotExist(err) {
		t.Fatalf("the link inside is still there: %v", err)
	}
}

// A FIFO planted in the workspace does not hold a call.
func TestJailFIFO(t *testing.T) {
	j := newJailed(t)
	if err := mkfifo(filepath.Join(j.ws, "fifo")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fails(t, j.cs, "fs_read", map[string]any{"path": "fifo"}, "INVALID_ARGUMENT")
	o := call(t, j.cs, "fs_write", map[string]any{"path": "fifo", "content": "x"})
	if !o.isError {
		t.Fatalf("fs_write to a FIFO succeeded")
	}
}

// A write refused as an escape leaves nothing behind: no parent directory
// is created before the whole path is known to resolve inside the
// workspace. (fs_write of sub/up/../outside/w5.txt, sub/up a link to
// "..", once created sub/outside: the parent was cleaned lexically, so
// the directory made was not the one the path named.)
func TestJailRefusedWriteCreatesNothing(t *testing.T) {
	j := newJailed(t)
	for _, d := range []string{"sub", "inside/deep"} {
		if err := os.MkdirAll(filepath.Join(j.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("..", filepath.Join(j.ws, "sub", "up")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, j.ws)
	for _, p := range []string{
		"sub/up/../outside/w5.txt",
		"sub/up/../outside/new/w6.txt",
		"sub/up/up/../x/w7.txt",
		"newdir/../../outside/w8.txt",
		"newdir/a/../../../outside/w9.txt",
		"inside/deep/../../../outside/w10.txt",
		"inside/a/b/../c/w11.txt", // climbs out of b, which it would create
	} {
		t.Run(p, func(t *testing.T) {
			if o := j.try(t, "fs_write", map[string]any{"path": p, "content": "x"}); !o.isError {
				t.Fatalf("fs_write %s succeeded", p)
			}
			if now := snapshot(t, j.ws); now != before {
				t.Fatalf("the refused write changed the workspace:\nbefore:\n%s\nafter:\n%s", before, now)
			}
			j.check(t)
		})
	}
	// A path that climbs and stays inside still writes, parents created.
	ok(t, j.cs, "fs_write", map[string]any{"path": "sub/up/inside/../made/w.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(j.ws, "made", "w.txt")); err != nil {
		t.Fatal(err)
	}
	ok(t, j.cs, "fs_write", map[string]any{"path": "inside/deep/../a/b/w.txt", "content": "x"})
	if _, err := os.Stat(filepath.Join(j.ws, "inside", "a", "b", "w.txt")); err != nil {
		t.Fatal(err)
	}
}
