package main

import (
	"os"
	"testing"
)

// TestMain keeps the default state directory, and the registry of running
// servers in it, in a temporary folder: no test writes to the home
// directory, and no command follows a server another test started.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "legate-cmd-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
