package local_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/local"
)

func TestAnnounceFindAndStop(t *testing.T) {
	state, registry := t.TempDir(), t.TempDir()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"version":"v-test","listen":"127.0.0.1:1"}`))
	})
	stop, err := local.AnnounceIn(local.Record{PID: os.Getpid(), Listen: "127.0.0.1:1", StateDir: state}, registry, h)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := local.Find(state)
	if err != nil || rec.Listen != "127.0.0.1:1" {
		t.Fatalf("Find = %+v, %v", rec, err)
	}
	if fi, err := os.Stat(rec.Socket); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket %s: %v, mode %v; want 0600", rec.Socket, err, fi.Mode().Perm())
	}
	if got := local.Running(registry); len(got) != 1 || got[0].StateDir != state {
		t.Fatalf("Running = %+v; want the one server", got)
	}
	s, err := local.Client(rec, "").Status(t.Context())
	if err != nil || s.Version != "v-test" {
		t.Fatalf("Status over the socket = %+v, %v", s, err)
	}
	// A second server on the same directory is refused, naming the first.
	if _, err := local.AnnounceIn(local.Record{PID: os.Getpid() + 1, StateDir: state}, registry, h); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Fatalf("a second server on the same state: %v", err)
	}
	stop()
	if _, err := local.Find(state); err != local.ErrNotRunning {
		t.Fatalf("Find after stop: %v", err)
	}
	if got := local.Running(registry); len(got) != 0 {
		t.Fatalf("Running after stop = %+v", got)
	}
}

// A record left by a server that died is no server, and its pointer goes.
func TestDeadServerIsNone(t *testing.T) {
	state, registry := t.TempDir(), t.TempDir()
	stop, err := local.AnnounceIn(local.Record{PID: 1, StateDir: state}, registry, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(state, local.RecordFile))
	ptrs, _ := filepath.Glob(filepath.Join(registry, "servers", "*.json"))
	stop()
	os.WriteFile(filepath.Join(state, local.RecordFile), b, 0o600) // as a killed server leaves it
	for _, p := range ptrs {
		os.WriteFile(p, b, 0o600)
	}
	if _, err := local.Find(state); err != local.ErrNotRunning {
		t.Fatalf("Find of a dead server's record: %v", err)
	}
	if got := local.Running(registry); len(got) != 0 {
		t.Fatalf("Running = %+v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(registry, "servers", "*.json")); len(left) != 0 {
		t.Errorf("the dead server's pointer is still there: %v", left)
	}
}

// A state directory too deep for a socket path gets one in the temporary directory.
func TestLongStateDir(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if p := local.SocketPath(deep); len(p) > 100 || !strings.HasSuffix(p, ".sock") {
		t.Fatalf("SocketPath = %q", p)
	}
}

// A socket folder another user could write to is refused, by the server and by the command.
func TestSocketFolderMustBePrivate(t *testing.T) {
	state := t.TempDir()
	if err := os.Chmod(state, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := local.AnnounceIn(local.Record{PID: os.Getpid(), StateDir: state}, "", http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("announcing in a folder everyone may write to: %v", err)
	}
	os.Chmod(state, 0o700)
	stop, err := local.AnnounceIn(local.Record{PID: os.Getpid(), StateDir: state}, "", http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	os.Chmod(state, 0o777)
	if _, err := local.Find(state); err != local.ErrNotRunning {
		t.Fatalf("Find through a folder everyone may write to: %v", err)
	}
}
