package google_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Sheets appends the row, but its answer comes after the request's
// timeout: the connector finds the row by its marker instead of appending
// it again, and the client gets it.
func TestTimedOutAppendIsDoneOnce(t *testing.T) {
	s := newStandin(t)
	s.fill("sheet-1", "Sheet1", 3, 2)
	in := build(t, s, "google", "timeout: 300ms")
	s.afterAppend = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			<-r.Context().Done() // done; the answer never leaves in time
			return true
		}
		return false
	}
	r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_row", `{"spreadsheet_id":"sheet-1","range":"Sheet1!A:B","values":["once",1]}`, "op-once"))
	rows := s.rows("sheet-1", "Sheet1")
	if s.appendCount() != 1 || len(rows) != 4 {
		t.Fatalf("%d appends, %d rows; want 1 append, 4 rows", s.appendCount(), len(rows))
	}
	if r.Range != "Sheet1!A4:B4" || r.FirstRow != 4 || strings.Join(r.Rows[0], ",") != "once,1" || r.ExternalID != "sheet-1" {
		t.Fatalf("outcome %+v; want the row found, without its marker", r)
	}
}

// A thousand appends, each of whose first attempt is performed by Sheets
// and then loses its answer (the connection drops); every other call also
// gives up and is called again with the same idempotency key. Rows repeat
// their values, so only the marker tells them apart. Each client gets its
// row, and the sheet holds exactly one per key.
func TestNoDuplicateRowsOverAThousandLostAnswers(t *testing.T) {
	s := newStandin(t)
	retrying := build(t, s, "google", "")
	giving := build(t, s, "google", "max_attempts: 1")
	giving.key, giving.ops = retrying.key, retrying.ops
	seen := map[string]bool{}
	s.afterAppend = func(n int, w http.ResponseWriter, r *http.Request) bool {
		s.mu.Lock()
		rows := s.sheets["sheet-1"]["Sheet1"]
		marker := fmt.Sprint(rows[len(rows)-1][2])
		first := !seen[marker]
		seen[marker] = true
		s.mu.Unlock()
		if first {
			hangUp(w)
		}
		return first
	}
	const writes = 1000
	for i := range writes {
		in := retrying
		if i%2 == 1 {
			in = giving
		}
		op, args := fmt.Sprintf("op-%d", i), fmt.Sprintf(`{"spreadsheet_id":"sheet-1","range":"Sheet1!A:B","values":["same row",%d]}`, i%3)
		res, err := in.call(t, "t1", "sheets_append_row", args, op)
		if i%2 == 1 {
			wantCode(t, err, legate.CodeTransient)
			res, err = in.call(t, "t1", "sheets_append_row", args, op)
		}
		r := decode[model.SheetRange](t, outcome{res, err})
		if r.FirstRow != i+1 || strings.Join(r.Rows[0], ",") != fmt.Sprintf("same row,%d", i%3) {
			t.Fatalf("write %d: got %+v; want row %d", i, r, i+1)
		}
	}
	rows := s.rows("sheet-1", "Sheet1")
	markers := map[string]int{}
	for _, r := range rows {
		markers[r[2]]++
	}
	if len(rows) != writes || len(markers) != writes || s.appendCount() != writes {
		t.Fatalf("%d rows with %d markers after %d appends; want %d of each", len(rows), len(markers), s.appendCount(), writes)
	}
}

// Without the marker a lost answer cannot be reconciled: the append is
// not retried (no duplicate), and the client is told to look.
func TestAppendWithoutMarkerIsAtMostOnce(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "google", "operation_marker: false")
	s.afterAppend = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			hangUp(w)
			return true
		}
		return false
	}
	args := `{"spreadsheet_id":"sheet-1","range":"Sheet1","values":["x"]}`
	_, err := in.call(t, "t1", "sheets_append_row", args, "op-1")
	wantCode(t, err, legate.CodeConflict)
	_, err = in.call(t, "t1", "sheets_append_row", args, "op-1")
	wantCode(t, err, legate.CodeConflict)
	if rows := s.rows("sheet-1", "Sheet1"); s.appendCount() != 1 || len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%d appends, rows %q; want one row of the value alone", s.appendCount(), rows)
	}
	r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_row", args, "op-2"))
	if r.Range != "Sheet1!A2:A2" || s.appendCount() != 2 {
		t.Fatalf("another key: %+v", r)
	}
}
