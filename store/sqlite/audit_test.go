package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// A batch larger than one INSERT is written whole, in order, every field kept.
func TestAuditAppendKeepsEveryRow(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.UnixMicro(time.Now().UnixMicro())
	var rows []store.AuditRow
	for i := range 150 {
		rows = append(rows, store.AuditRow{
			Time: start.Add(time.Duration(i) * time.Microsecond), Principal: fmt.Sprint("p", i), Tenant: "t", Session: "s",
			Tool: "mcp.up.echo", Source: "upstream:up", Class: "read", Decision: "allow", Rule: "defaults.read",
			ApprovalID: fmt.Sprint("a", i), Outcome: "ok", Latency: time.Duration(i) * time.Microsecond,
			ArgsHash: fmt.Sprint("h", i), ResultSize: i, Detail: fmt.Sprint("d", i),
		})
	}
	if err := st.Audit().Append(ctx, rows); err != nil {
		t.Fatal(err)
	}
	got, err := st.Audit().Query(ctx, store.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows read back, want %d", len(got), len(rows))
	}
	for i, g := range got {
		w := rows[i]
		w.ID = g.ID
		if !g.Time.Equal(w.Time) {
			t.Fatalf("row %d: time %v, want %v", i, g.Time, w.Time)
		}
		g.Time = w.Time
		if g != w {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
