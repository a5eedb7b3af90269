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
	in := build(t, s, "google", "timeout: 300ms\noperation_marker: true")
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
	retrying := build(t, s, "google", "operation_marker: true")
	giving := build(t, s, "google", "operation_marker: true\nmax_attempts: 1")
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

// Markers off (the default), a lost answer is reconciled by content: the
// rows at the table's end holding the values sent are the append, found
// instead of made again; formulas, which the sheet shows computed, cannot
// be found so, and the call fails with CONFLICT instead of appending twice.
func TestLostAppendIsFoundByContent(t *testing.T) {
	s := newStandin(t)
	s.fill("sheet-1", "Sheet1", 2, 2)
	in := build(t, s, "google", "")
	s.afterAppend = func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 || n == 3 {
			hangUp(w)
			return true
		}
		return false
	}
	args := `{"spreadsheet_id":"sheet-1","range":"Sheet1","rows":[["x",1],["y",2]]}`
	r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_rows", args, "op-1"))
	if s.appendCount() != 1 || r.Range != "Sheet1!A3:B4" || r.ProviderMetadata["found_after_lost_answer"] != true || len(s.rows("sheet-1", "Sheet1")) != 4 {
		t.Fatalf("%d appends, result %+v; want one, found", s.appendCount(), r)
	}
	r = decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_rows", `{"spreadsheet_id":"sheet-1","range":"Sheet1","rows":[["z",3]]}`, "op-2"))
	if s.appendCount() != 2 || r.Range != "Sheet1!A5:B5" {
		t.Fatalf("another key: %+v", r)
	}
	_, err := in.call(t, "t1", "sheets_append_rows", `{"spreadsheet_id":"sheet-1","range":"Sheet1","rows":[["=1+1"]],"user_entered":true}`, "op-3")
	wantCode(t, err, legate.CodeConflict)
	if s.appendCount() != 3 {
		t.Fatalf("%d appends; want 3", s.appendCount())
	}
}
