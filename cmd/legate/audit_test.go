package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// seedAudit writes rows to the state dir's database in the order given,
// as calls that complete in that order.
func seedAudit(t *testing.T, state string, rows ...store.AuditRow) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenFile(ctx, filepath.Join(state, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Audit().Append(ctx, rows); err != nil {
		t.Fatal(err)
	}
}

// The audit CLI takes a tool's wire name as well as its canonical one, ages
// in days, shows rows by call time, and -n 0 shows none.
func TestAuditQueryAndTail(t *testing.T) {
	state := t.TempDir()
	now := time.Now().UTC()
	seedAudit(t, state,
		store.AuditRow{Time: now.Add(-time.Minute), Principal: "p", Tool: "http.request", Outcome: "ok", ArgsHash: "late-finisher"},
		store.AuditRow{Time: now.Add(-10 * time.Second), Principal: "p", Tool: "legate.approval_status", Outcome: "ok", ArgsHash: "quick"},
		store.AuditRow{Time: now.Add(-50 * time.Hour), Principal: "p", Tool: "http.request", Outcome: "ok", ArgsHash: "two-days-old"},
	)
	cli := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, append(args, "--state-dir", state)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	if out := cli("audit", "query", "--tool", "http__request", "--since", "1d"); !strings.Contains(out, "late-fin") || strings.Contains(out, "two-days") {
		t.Errorf("query by wire name, since 1d:\n%s", out)
	}
	if out := cli("audit", "query", "--tool", "http.request", "--since", "3d"); !strings.Contains(out, "two-days") {
		t.Errorf("query by canonical name, since 3d:\n%s", out)
	}
	out := cli("audit", "tail", "-n", "3")
	if i, j, k := strings.Index(out, "two-days"), strings.Index(out, "late-fin"), strings.Index(out, "quick"); !(i >= 0 && i < j && j < k) {
		t.Errorf("tail is not in call-time order:\n%s", out)
	}
	if out := cli("audit", "tail", "-n", "0"); out != "" {
		t.Errorf("tail -n 0 printed:\n%s", out)
	}
	for _, bad := range [][]string{{"audit", "tail", "-n", "-1"}, {"audit", "query", "--since", "1w"}, {"audit", "query", "--limit", "0"}} {
		if _, err := runCLI(t, append(bad, "--state-dir", state)...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
