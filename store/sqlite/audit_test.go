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

// BenchmarkAuditAppend writes batches the size the audit writer flushes
// under load (about 3,000 calls/s for its 200 ms), to a file as served.
func BenchmarkAuditAppend(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rows := make([]store.AuditRow, 600)
	for i := range rows {
		rows[i] = store.AuditRow{Time: time.Now(), Principal: "p", Tenant: "t", Session: "s", Tool: "github.get_issue",
			Source: "native:github", Class: "read", Decision: "allow", Rule: "defaults.read", Outcome: "ok",
			Latency: time.Duration(i) * time.Microsecond, ArgsHash: "h", ResultSize: 900}
	}
	b.ResetTimer()
	for b.Loop() {
		// A batch of 600 is 9 full statements and one of 24 rows; the next
		// flush's remainder differs.
		if err := st.Audit().Append(ctx, rows[:600-b.N%7]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/600, "ns/row")
}
