// Package e2e_test runs the legate binary against real third-party MCP peers: the TypeScript
// SDK client, the MCP Inspector's CLI and the official conformance suite, installed at pinned
// versions by scripts/peers.sh into LEGATE_PEERS_DIR (default ~/.cache/legate-peers).
//
// Without the peers every test skips and says to run scripts/peers.sh; under CI=true a missing
// peer fails instead. All traffic stays on 127.0.0.1.
package e2e_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

// legateBin is the binary built once by TestMain, or $LEGATE_BIN when that is set.
var legateBin string

// buildDir is a temporary folder for binaries built by TestMain or on demand (fixtureBin),
// removed when the tests end.
var buildDir string

func TestMain(m *testing.M) {
	flag.Parse()
	// The scale-out test keeps its replicas' store in PostgreSQL: its test
	// database is dropped when the tests end.
	os.Exit(pgtest.Main(runner(func() int { return run(m) })))
}

// runner is a TestMain's steps around m.Run, as pgtest.Main runs them.
type runner func() int

func (r runner) Run() int { return r() }

func run(m *testing.M) int {
	if testing.Short() {
		return m.Run() // every test skips itself
	}
	dir, err := os.MkdirTemp("", "legate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildDir = dir
	// Servers announce themselves in the default state directory's
	// registry, and commands follow them: keep both out of the home
	// directory, and the tests' servers out of each other's commands.
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state-home"))
	if _, err := findPeers(); err != nil && os.Getenv("CI") != "true" {
		return m.Run() // the tests that need peers skip; those that need only the binary build it (binary)
	}
	if bin := os.Getenv("LEGATE_BIN"); bin != "" { // test a binary built elsewhere
		abs, err := filepath.Abs(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: LEGATE_BIN:", err)
			return 1
		}
		legateBin = abs
		return m.Run()
	}
	legateBin = filepath.Join(dir, "legate")
	build := exec.Command("go", "build", "-o", legateBin, "./cmd/legate")
	build.Dir = ".." // the module root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/legate: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// binary returns the legate binary for a test that needs no peer, only
// `legate serve`: the one TestMain built (or $LEGATE_BIN), else one built
// now, once. It skips t in -short mode.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	buildOnce.Do(func() {
		if legateBin != "" {
			return
		}
		if bin := os.Getenv("LEGATE_BIN"); bin != "" {
			legateBin, buildErr = filepath.Abs(bin)
			return
		}
		bin := filepath.Join(buildDir, "legate")
		build := exec.Command("go", "build", "-o", bin, "./cmd/legate")
		build.Dir = ".." // the module root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/legate: %v\n%s", err, out)
			return
		}
		legateBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return legateBin
}

var (
	buildOnce sync.Once
	buildErr  error
)

// need skips t in -short mode and returns the peers, or skips t when they are missing (fails it
// under CI=true, where scripts/peers.sh must have run).
func need(t *testing.T) *peerSet {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped in -short mode")
	}
	p, err := findPeers()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("e2e: %v (CI=true: run scripts/peers.sh before the tests)", err)
		}
		t.Skipf("e2e: %v: run scripts/peers.sh to install the real MCP peers", err)
	}
	return p
}
