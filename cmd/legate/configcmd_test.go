package main

import (
	"os"
	"testing"
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
