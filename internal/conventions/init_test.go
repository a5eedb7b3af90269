package conventions_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// maxInitBytes caps what one package's initialization allocates: every
// command, and every start of the server (P5), pays it, whether or not
// the feature is used. Work that needs more is done at first use.
const maxInitBytes = 1 << 20

var initLine = regexp.MustCompile(`(?m)^init (\S+) @.*?, (\d+) bytes, \d+ allocs$`)

// TestInitIsCheap runs `legate --version` with the runtime's trace of
// package initialization and checks what each package allocated.
func TestInitIsCheap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "legate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/legate")
	build.Dir = root(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("legate --version: %v\n%s", err, out)
	}
	lines := initLine.FindAllSubmatch(out, -1)
	if len(lines) < 50 {
		t.Fatalf("only %d packages traced; the trace's format changed?\n%s", len(lines), out)
	}
	for _, l := range lines {
		if n, _ := strconv.Atoi(string(l[2])); n > maxInitBytes {
			t.Errorf("initializing %s allocates %d bytes, more than %d: do that work at first use", l[1], n, maxInitBytes)
		}
	}
}
