// Package sqltest holds what the SQL connectors' tests share: reaching a
// real database (skipped with a message outside CI, a failure under
// CI=true), calling a tool, and the bypass corpus and fuzz inputs that
// every dialect replays against its real server.
package sqltest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// Env returns the environment variable name, or def when it is unset.
func Env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Unavailable ends a test that cannot reach its database: a failure under
// CI=true, where the databases are part of the machine, else a skip that
// says how to provide one.
func Unavailable(t testing.TB, what, envName string, err error) {
	t.Helper()
	msg := what + " is not reachable (" + err.Error() + "); start one, or point " + envName + " at one"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Call runs the tool name of c with args (a JSON object) and returns its
// structured result as JSON, or the error.
func Call(t testing.TB, c connectors.Connector, name, args, opID string) (json.RawMessage, error) {
	t.Helper()
	for _, tool := range c.Tools() {
		if tool.Name != name {
			continue
		}
		res, err := tool.Run(context.Background(), &connectors.Call{Tool: name, Args: json.RawMessage(args),
			Credentials: noCreds{}, OperationID: opID})
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(res.Structured)
		if err != nil {
			t.Fatalf("%s: result does not encode: %v", name, err)
		}
		checkOutput(t, tool, b)
		return b, nil
	}
	t.Fatalf("no tool %q", name)
	return nil, nil
}

// BenchQuery100 measures c's query tool on a query of 100 rows of the
// canary table, the gateway left out: the connector's own cost.
func BenchQuery100(b *testing.B, c connectors.Connector) {
	args := `{"sql": "SELECT id, v, id * 1.5 AS n, now() AS ts FROM legate_canary ORDER BY id LIMIT 100"}`
	for b.Loop() {
		if _, err := Call(b, c, "query", args, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// Code is the canonical code of err, "" for nil.
func Code(err error) legate.Code {
	if err == nil {
		return ""
	}
	var le *legate.Error
	if errors.As(err, &le) {
		return le.Code
	}
	return "not a *legate.Error: " + legate.Code(err.Error())
}

type noCreds struct{}

func (noCreds) Get(context.Context, string) (string, error) { return "", connectors.ErrNoCredential }
func (noCreds) Has(string) bool                             { return false }

// FuzzInputs returns the inputs go test -fuzz saved for the guard's fuzz
// targets (sqlbase/testdata/fuzz/<target>/*), each a statement.
func FuzzInputs(t testing.TB) []FuzzInput {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "testdata", "fuzz")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*"))
	var out []FuzzInput
	for _, f := range files {
		sql, err := readFuzzFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, FuzzInput{Name: filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f), SQL: sql})
	}
	return out
}

// FuzzInput is one saved fuzz input of the guard.
type FuzzInput struct {
	Name string
	SQL  string
}

// readFuzzFile reads a "go test fuzz v1" file of a target taking one
// string.
func readFuzzFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "string(") && strings.HasSuffix(line, ")") {
			return strconv.Unquote(line[len("string(") : len(line)-1])
		}
	}
	return "", errors.New("no string value")
}

// checkOutput fails the test when a result does not match the tool's
// output schema, which clients check it against.
func checkOutput(t testing.TB, tool connectors.Tool, result []byte) {
	t.Helper()
	if tool.OutputSchema == nil {
		t.Fatalf("%s has no output schema", tool.Name)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool.Name, err)
	}
	var v any
	json.Unmarshal(result, &v)
	if err := resolved.Validate(v); err != nil {
		t.Fatalf("%s: result %s does not match its output schema: %v", tool.Name, result, err)
	}
}
