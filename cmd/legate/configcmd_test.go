package main

import (
	"os"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// legate config schema prints the schema kept beside the config package
// (which its own tests check against the spec and the example).
func TestConfigSchema(t *testing.T) {
	out, err := runCLI(t, "config", "schema")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../config/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Fatalf("legate config schema printed another schema than config/schema.json:\n%.400s", out)
	}
}

// The server still falls back on defaults of its own for a File built by
// hand; they must be the spec's, which config.Load applies.
func TestServerFallbacksAreTheSpecDefaults(t *testing.T) {
	d := config.Default()
	if time.Duration(d.SessionIdleTimeout) != server.DefaultSessionIdleTimeout {
		t.Errorf("session_idle_timeout: spec %v, server %v", d.SessionIdleTimeout, server.DefaultSessionIdleTimeout)
	}
	if time.Duration(d.CallTimeout) != server.DefaultCallTimeout {
		t.Errorf("call_timeout: spec %v, server %v", d.CallTimeout, server.DefaultCallTimeout)
	}
}
