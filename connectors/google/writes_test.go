package google_test

import (
	"encoding/json"
	"fmt"
	"github.com/legate-mcp/legate/connectors/google/calendar"
	"github.com/legate-mcp/legate/connectors/google/gmail"
	"net/http"
	"strings"
	"testing"
)

// writeCase is a write tool's call and the stand-in's count of the
// provider writes it makes.
type writeCase struct {
	args  string
	op    string // the stand-in's write op (afterWrite, writeCount)
	seed  func(s *standin)
	count func(s *standin) int
}

var writeCases = map[string]writeCase{
	"drive_upload_file":         {args: `{"name":"a.txt","content":"hello"}`, op: "upload"},
	"drive_share_file":          {args: `{"file_id":"f00","type":"group","role":"reader","email_address":"team@example.com"}`, op: "share", seed: func(s *standin) { s.seedFiles(1) }},
	"docs_create_document":      {args: `{"title":"Memo","text":"hi"}`, op: "doc"},
	"docs_append_text":          {args: `{"document_id":"doc-1","text":"\nmore"}`, op: "docedit", seed: func(s *standin) { s.seedDoc() }},
	"docs_replace_text":         {args: `{"document_id":"doc-1","find":"second","replace":"2nd"}`, op: "docedit", seed: func(s *standin) { s.seedDoc() }},
	"sheets_update_range":       {args: `{"spreadsheet_id":"sheet-1","range":"Sheet1!A1","rows":[["x"]]}`, op: "update"},
	"sheets_create_spreadsheet": {args: `{"title":"Q4"}`, op: "create"},
	"sheets_append_rows":        {args: `{"spreadsheet_id":"sheet-1","range":"Sheet1","rows":[["a"],["b"]]}`, count: func(s *standin) int { return s.appendCount() }},
	"sheets_append_row":         {args: `{"spreadsheet_id":"sheet-1","range":"Sheet1","values":["a"]}`, count: func(s *standin) int { return s.appendCount() }},
}

func (w writeCase) writes(s *standin) int {
	if w.count != nil {
		return w.count(s)
	}
	return s.writeCount(w.op)
}

// Every write tool is in writeCases.
func TestEveryWriteHasACase(t *testing.T) {
	for _, tool := range build(t, newStandin(t), "google", "toolsets: [all]").c.Tools() {
		if tool.Toolset == gmail.Toolset || tool.Toolset == calendar.Toolset {
			continue // their packages run every tool against their stand-ins
		}
		if _, ok := writeCases[tool.Name]; !ok && tool.Class != "read" {
			t.Errorf("write tool %s has no writeCase", tool.Name)
		}
	}
}

// A client retrying a write a thousand times with the same idempotency
// key makes one provider write, and gets the first outcome each time.
func TestRetriedWritesAreDoneOnce(t *testing.T) {
	for tool, w := range writeCases {
		t.Run(tool, func(t *testing.T) {
			s := newStandin(t)
			if w.seed != nil {
				w.seed(s)
			}
			in := build(t, s, "google", "")
			first := in.do(t, "t1", tool, w.args, "op-1")
			want, _ := json.Marshal(decode[map[string]any](t, first))
			for i := range 1000 {
				got, _ := json.Marshal(decode[map[string]any](t, in.do(t, "t1", tool, w.args, "op-1")))
				if string(got) != string(want) {
					t.Fatalf("retry %d: %s; want %s", i, got, want)
				}
			}
			if n := w.writes(s); n != 1 {
				t.Fatalf("%d provider writes; want 1", n)
			}
		})
	}
}

// Google performs the write, but its answer is lost (the connection
// drops): the connector finds it (by content: markers are off) instead
// of writing again. An update of fixed cells is sent again, which writes
// the same values.
func TestLostAnswersAreFound(t *testing.T) {
	for _, markers := range []string{"", "operation_marker: true"} {
		for tool, w := range writeCases {
			if w.count != nil {
				continue // appends: idempotency_test.go
			}
			t.Run(tool+" "+markers, func(t *testing.T) { lostAnswer(t, tool, w, markers) })
		}
	}
}

func lostAnswer(t *testing.T, tool string, w writeCase, markers string) {
	s := newStandin(t)
	if w.seed != nil {
		w.seed(s)
	}
	in := build(t, s, "google", markers)
	lost := 0
	s.afterWrite = func(op string, rw http.ResponseWriter, r *http.Request) bool {
		if op == w.op && lost == 0 {
			lost++
			hangUp(rw)
			return true
		}
		return false
	}
	res, err := in.call(t, "t1", tool, w.args, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	want := 1
	if tool == "sheets_update_range" {
		want = 2
		if rows := s.rows("sheet-1", "Sheet1"); fmt.Sprint(rows) != "[[x]]" {
			t.Fatalf("sheet %q", rows)
		}
	} else if b, _ := json.Marshal(res.Structured); !strings.Contains(string(b), "found_after_lost_answer") && tool != "drive_share_file" && !strings.HasSuffix(tool, "_create_document") && !strings.HasSuffix(tool, "_spreadsheet") && tool != "drive_upload_file" {
		t.Errorf("result %s does not say it was found", b)
	}
	if n := w.writes(s); n != want {
		t.Fatalf("%d provider writes; want %d", n, want)
	}
}
