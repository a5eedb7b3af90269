// Package local is how the legate command finds the server that runs on
// a state directory and talks to it.
//
// A running server announces itself: it writes server.json into its state
// directory (where it listens, which configuration it serves, its process
// id) and serves the admin API on a Unix socket that only the directory's
// owner may open, so that a command on the same machine reaches it without
// a token, as the owner of its keys and database already could. It also
// leaves a pointer in the user's registry (servers/ in the default state
// directory), so that a command run from another folder, which would pick
// the default directory, finds a server started elsewhere.
package local

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/legate-mcp/legate/statedir"
)

// Record is what a running server writes into its state directory.
type Record struct {
	PID int `json:"pid"`
	// Listen is the address MCP is served on (host:port).
	Listen string `json:"listen"`
	// Config is the configuration file served, absolute; "" for none.
	Config string `json:"config,omitempty"`
	// StateDir is the state directory, absolute.
	StateDir string `json:"state_dir"`
	// Store names the store, its credentials taken out.
	Store string `json:"store"`
	// Socket is the Unix socket of the admin API.
	Socket  string    `json:"socket"`
	Version string    `json:"version,omitempty"`
	Started time.Time `json:"started"`
}

// RecordFile is the record's name in the state directory.
const RecordFile = "server.json"

// registryDir is the folder of pointers in the default state directory.
const registryDir = "servers"

// maxSocketPath is how long a Unix socket's path may be on every system
// (sun_path is 104 bytes on the BSDs, 108 on Linux).
const maxSocketPath = 100

// SocketPath is where a server on the state directory dir listens for the
// admin API: legate.sock in dir, or, when that path is too long for a
// socket, a folder of the user's in the temporary directory.
func SocketPath(dir string) string {
	p := filepath.Join(dir, "legate.sock")
	if len(p) <= maxSocketPath {
		return p
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("legate-%d", os.Getuid()), key(dir)+".sock")
}

// key names the state directory dir in the registry.
func key(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:8])
}

// NewRecord is the record of this process, serving MCP on listen with the
// configuration file cfgPath ("" for none) on the state directory stateDir
// and the store storeURL, whose password it leaves out.
func NewRecord(listen, cfgPath, stateDir, storeURL, version string) Record {
	if cfgPath != "" {
		cfgPath, _ = filepath.Abs(cfgPath)
	}
	if u, err := url.Parse(storeURL); err == nil && u.User != nil {
		storeURL = u.Redacted()
	}
	return Record{PID: os.Getpid(), Listen: listen, Config: cfgPath, StateDir: stateDir, Store: storeURL, Version: version, Started: time.Now()}
}

// Announce serves h on rec's socket and writes the record into
// rec.StateDir and a pointer into the registry of the default state
// directory (AnnounceIn). It fails when another live server runs on the
// same state directory. stop takes it all back.
func Announce(rec Record, h http.Handler) (stop func(), err error) {
	reg, _ := statedir.DefaultDir(os.Getenv)
	return AnnounceIn(rec, reg, h)
}

// AnnounceIn is Announce with the registry of the default state directory
// registry; "" leaves no pointer.
func AnnounceIn(rec Record, registry string, h http.Handler) (stop func(), err error) {
	if other, err := Find(rec.StateDir); err == nil && other.PID != rec.PID {
		return nil, fmt.Errorf("another legate server (pid %d, listening on %s) already runs on the state directory %s; stop it, or give this one another --state-dir", other.PID, other.Listen, rec.StateDir)
	}
	rec.Socket = SocketPath(rec.StateDir)
	if err := os.MkdirAll(filepath.Dir(rec.Socket), 0o700); err != nil {
		return nil, err
	}
	if err := private(filepath.Dir(rec.Socket)); err != nil {
		return nil, err
	}
	_ = os.Remove(rec.Socket) // a dead server's; Find saw none alive
	ln, err := net.Listen("unix", rec.Socket)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(rec.Socket, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	files := []string{filepath.Join(rec.StateDir, RecordFile)}
	if registry != "" && registry != rec.StateDir {
		files = append(files, filepath.Join(registry, registryDir, key(rec.StateDir)+".json"))
	}
	undo := func() {
		srv.Close()
		for _, f := range files {
			_ = os.Remove(f)
		}
		_ = os.Remove(rec.Socket)
	}
	for _, f := range files {
		if err := writeJSON(f, rec); err != nil {
			undo()
			return nil, err
		}
	}
	return undo, nil
}

// writeJSON writes v to path, readable by its owner only, through a
// temporary file so that a reader never sees half of it.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ErrNotRunning is Find's error when no live server runs on a directory.
var ErrNotRunning = errors.New("no legate server runs on this state directory")

// Find returns the record of the live server on the state directory dir,
// or ErrNotRunning. A record whose socket answers nothing is a dead
// server's, and is taken for none.
func Find(dir string) (*Record, error) {
	rec, err := read(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, err
	}
	if rec.StateDir != dir || private(filepath.Dir(rec.Socket)) != nil || !alive(rec) {
		return nil, ErrNotRunning
	}
	return rec, nil
}

// read reads a record; a missing file is ErrNotRunning.
func read(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotRunning
	}
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

// alive reports whether rec's socket takes a connection.
func alive(rec *Record) bool {
	c, err := net.DialTimeout("unix", rec.Socket, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Running lists the live servers the registry of the default state
// directory registry knows, the one on registry itself included, by state
// directory. Pointers of servers that are gone are removed.
func Running(registry string) []*Record {
	var out []*Record
	if rec, err := Find(registry); err == nil {
		out = append(out, rec)
	}
	paths, _ := filepath.Glob(filepath.Join(registry, registryDir, "*.json"))
	for _, p := range paths {
		rec, err := read(p)
		if err != nil {
			continue
		}
		if live, err := Find(rec.StateDir); err == nil && live.PID == rec.PID {
			out = append(out, live)
			continue
		}
		_ = os.Remove(p)
	}
	slices.SortFunc(out, func(a, b *Record) int { return cmp.Compare(a.StateDir, b.StateDir) })
	return slices.CompactFunc(out, func(a, b *Record) bool { return a.StateDir == b.StateDir })
}

// socketDialer dials a server's socket whatever address is asked.
type socketDialer struct{ path string }

func (d *socketDialer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var nd net.Dialer
	return nd.DialContext(ctx, "unix", d.path)
}

// String names the server for people: its process, address and state.
func (r *Record) String() string {
	cfg := "no config file"
	if r.Config != "" {
		cfg = "config " + r.Config
	}
	return fmt.Sprintf("pid %d on %s, %s, state %s", r.PID, r.Listen, cfg, r.StateDir)
}
