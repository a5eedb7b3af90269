package sqlbase_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

var errConflict = legate.Errorf(legate.CodeTransient, "fake: deadlock")

// flaky is a Backend whose writes fail with a retryable error until
// failures runs out; it records what it was asked.
type flaky struct {
	sqlbase.Backend
	failures int
	writes   []*sqlbase.WriteRequest
}

func (f *flaky) Write(_ context.Context, _ connectors.Credentials, w *sqlbase.WriteRequest) (*sqlbase.ExecResult, error) {
	f.writes = append(f.writes, w)
	if f.failures > 0 {
		f.failures--
		return nil, errConflict
	}
	return &sqlbase.ExecResult{RowsAffected: 1}, nil
}

func (f *flaky) Retryable(err error) bool { return errors.Is(err, errConflict) }

func TestExecuteRetriesConflictsWithOneKey(t *testing.T) {
	for name, tc := range map[string]struct {
		failures, attempts, calls int
		ok                        bool
	}{
		"cured by a retry": {failures: 2, attempts: 3, calls: 3, ok: true},
		"attempts run out": {failures: 5, attempts: 3, calls: 3},
		"no retry":         {failures: 1, attempts: 1, calls: 1},
	} {
		t.Run(name, func(t *testing.T) {
			b := &flaky{failures: tc.failures}
			tools := sqlbase.Tools(b, sqlbase.Options{Dialect: sqlbase.Postgres, Type: "postgres", Instance: "pg",
				DefaultRows: 10, MaxRows: 10, Attempts: tc.attempts})
			retries := 0
			var execute connectors.Tool
			for _, tool := range tools {
				if tool.Name == "execute" {
					execute = tool
				}
			}
			_, err := execute.Run(context.Background(), &connectors.Call{Tool: "execute", OperationID: "op-7",
				Args: json.RawMessage(`{"sql": "UPDATE t SET a = $1", "params": [12345678901234567]}`), Retried: func(string) { retries++ }})
			if (err == nil) != tc.ok || len(b.writes) != tc.calls || retries != tc.calls-1 {
				t.Fatalf("err %v, %d writes, %d retries; want ok=%v, %d writes", err, len(b.writes), retries, tc.ok, tc.calls)
			}
			for _, w := range b.writes {
				if w.Key != "op-7" || w.Hash != b.writes[0].Hash || w.Args[0] != int64(12345678901234567) {
					t.Fatalf("a retry changed the key, hash or arguments: %+v", w)
				}
			}
			if !tc.ok && sqltest.Code(err) != legate.CodeTransient {
				t.Fatalf("last error %v", err)
			}
		})
	}
}

func TestExecuteClass(t *testing.T) {
	for _, d := range []sqlbase.Dialect{sqlbase.Postgres, sqlbase.MySQL} {
		var execute connectors.Tool
		for _, tool := range sqlbase.Tools(&flaky{}, sqlbase.Options{Dialect: d, Type: "x", DefaultRows: 1, MaxRows: 1}) {
			if tool.Name == "execute" {
				execute = tool
			}
		}
		for args, want := range map[string]legate.Class{
			`{"sql": "INSERT INTO t VALUES (1)"}`:                              legate.ClassWrite,
			`{"sql": "UPDATE t SET a = 'delete'"}`:                             legate.ClassWrite,
			`{"sql": "DELETE FROM t WHERE id = 1"}`:                            legate.ClassDestructive,
			`{"sql": "WITH d AS (SELECT 1) DELETE FROM t"}`:                    legate.ClassDestructive,
			`{"sql": "MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE"}`: legate.ClassDestructive,
			`not json`: legate.ClassWrite,
		} {
			if got := execute.ClassOf(json.RawMessage(args)); got != want {
				t.Errorf("%s %s: class %s, want %s", d, args, got, want)
			}
		}
		if d == sqlbase.MySQL {
			if got := execute.ClassOf(json.RawMessage(`{"sql": "REPLACE INTO t VALUES (1)"}`)); got != legate.ClassDestructive {
				t.Errorf("REPLACE: class %s", got)
			}
			if got := execute.ClassOf(json.RawMessage(`{"sql": "UPDATE t SET a = REPLACE(a, 'x', 'y')"}`)); got != legate.ClassWrite {
				t.Errorf("the REPLACE function: class %s", got)
			}
		}
	}
}
