package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

// auditRows are n rows a microsecond apart from base, every field set;
// tools and principals alternate.
func auditRows(n int) []store.AuditRow {
	var rows []store.AuditRow
	for i := range n {
		rows = append(rows, store.AuditRow{
			Time: base.Add(time.Duration(i) * time.Microsecond), Principal: []string{"bob", "alice"}[i%2], Tenant: "acme",
			Session: "s", Tool: []string{"mcp.up.echo", "slack.post_message", "github.create_issue"}[i%3], Source: "upstream:up",
			Class: "read", Decision: "allow", Rule: "defaults.read", ApprovalID: fmt.Sprint("ap_", i), Outcome: "ok",
			Latency: time.Duration(i) * time.Microsecond, ArgsHash: fmt.Sprint("h", i), ResultSize: i, Detail: fmt.Sprint("d", i),
			Profile: []string{"", "coding"}[i%2],
		})
	}
	return rows
}

func testAudit(t *testing.T, open Opener) {
	ctx := context.Background()
	au := open(t).Audit()
	must(t, au.Append(ctx, nil))
	if rows, err := au.Query(ctx, store.AuditQuery{}); err != nil || len(rows) != 0 {
		t.Fatalf("empty log: %v %v", rows, err)
	}
	want := auditRows(12)
	must(t, au.Append(ctx, want[:5]))
	must(t, au.Append(ctx, want[5:]))

	all, err := au.Query(ctx, store.AuditQuery{})
	must(t, err)
	if len(all) != len(want) {
		t.Fatalf("read %d rows, want %d", len(all), len(want))
	}
	for i, got := range all {
		if i > 0 && got.ID <= all[i-1].ID {
			t.Fatalf("row %d: id %d after %d, want increasing ids", i, got.ID, all[i-1].ID)
		}
		w := want[i]
		w.ID = got.ID
		if !got.Time.Equal(w.Time) {
			t.Fatalf("row %d: time %v, want %v", i, got.Time, w.Time)
		}
		got.Time = w.Time
		if got != w {
			t.Fatalf("row %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	id := func(i int) int64 { return all[i].ID }

	for name, tc := range map[string]struct {
		q    store.AuditQuery
		want []int // indexes into all
	}{
		"one tool":                 {store.AuditQuery{Tool: "slack.post_message"}, []int{1, 4, 7, 10}},
		"one principal":            {store.AuditQuery{Principal: "alice"}, []int{1, 3, 5, 7, 9, 11}},
		"tool and principal":       {store.AuditQuery{Tool: "mcp.up.echo", Principal: "bob"}, []int{0, 6}},
		"since, inclusive":         {store.AuditQuery{Since: all[9].Time}, []int{9, 10, 11}},
		"after an id":              {store.AuditQuery{AfterID: id(8)}, []int{9, 10, 11}},
		"the newest, oldest first": {store.AuditQuery{Limit: 3}, []int{9, 10, 11}},
		"the first after an id":    {store.AuditQuery{AfterID: id(2), Limit: 2}, []int{3, 4}},
		"newest of one principal":  {store.AuditQuery{Principal: "bob", Limit: 2}, []int{8, 10}},
		"none match":               {store.AuditQuery{Tool: "nope"}, nil},
		"after the last":           {store.AuditQuery{AfterID: id(11)}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			rows, err := au.Query(ctx, tc.q)
			must(t, err)
			var got, wantIDs []int64
			for _, r := range rows {
				got = append(got, r.ID)
			}
			for _, i := range tc.want {
				wantIDs = append(wantIDs, id(i))
			}
			if !slices.Equal(got, wantIDs) {
				t.Fatalf("ids %v, want %v", got, wantIDs)
			}
		})
	}

	t.Run("prune", func(t *testing.T) {
		n, err := au.Prune(ctx, all[4].Time)
		if err != nil || n != 4 {
			t.Fatalf("pruned %d, %v; want 4 (the rows before)", n, err)
		}
		rows, err := au.Query(ctx, store.AuditQuery{})
		if err != nil || len(rows) != 8 || rows[0].ID != id(4) {
			t.Fatalf("after prune: %d rows from id %d, %v", len(rows), rows[0].ID, err)
		}
	})
	t.Run("limit 0 is 1000", func(t *testing.T) {
		au := open(t).Audit()
		must(t, au.Append(ctx, auditRows(1001)))
		rows, err := au.Query(ctx, store.AuditQuery{})
		if err != nil || len(rows) != 1000 || rows[0].ApprovalID != "ap_0" {
			t.Fatalf("read %d rows, %v; want the first 1000", len(rows), err)
		}
	})
}
