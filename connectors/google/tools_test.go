package google_test

import (
	"fmt"
	"github.com/legate-mcp/legate/connectors/google/calendar"
	"github.com/legate-mcp/legate/connectors/google/gmail"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// The results of the new tools, as a client decodes them.
type (
	contentOut struct {
		File       model.File
		As, Text   string
		Offset     int
		NextOffset int `json:"next_offset"`
		Binary     bool
	}
	permOut struct {
		ID, Type, Role string
		Email          string `json:"email_address"`
	}
	docOut struct {
		model.Object
		Title, Markdown string
		NextOffset      int `json:"next_offset"`
		Bytes           int
	}
	editOut struct {
		Document string `json:"document_ref"`
		Replaced int    `json:"occurrences_changed"`
		Found    bool   `json:"found_after_lost_answer"`
	}
	bookOut struct {
		model.Object
		Title string
		Tabs  []struct {
			Title string
			Rows  int
		}
	}
)

// toolCase calls one tool against the stand-in and checks what it did.
type toolCase func(t *testing.T, s *standin, in *instance)

// textFiles seeds the files the content cases read: a text file, a Doc,
// a spreadsheet, a PDF.
func textFiles(s *standin) {
	me := []owner{{EmailAddress: "me@example.com", Me: true}}
	s.addFile(file{ID: "txt-1", Name: "notes.txt", MimeType: "text/plain", Content: strings.Repeat("é", 5) + "hello world", Owners: me})
	s.addFile(file{ID: "gdoc-1", Name: "Spec", MimeType: "application/vnd.google-apps.document", Content: "# Spec\n\nThe **plan**.\n", Owners: me})
	s.addFile(file{ID: "gsheet-1", Name: "Budget", MimeType: "application/vnd.google-apps.spreadsheet", Content: "a,b\n1,2\n", Owners: me})
	s.addFile(file{ID: "pdf-1", Name: "Scan.pdf", MimeType: "application/pdf", Content: "%PDF-1.7", Owners: me})
}

// wantAuthor checks the author o's result names in its _meta for the
// gateway's provenance mark (provenance.Author), "" for none.
func wantAuthor(t *testing.T, o outcome, want string) {
	t.Helper()
	if o.err != nil {
		t.Fatal(o.err)
	}
	if a, ok := provenance.AuthorIn(o.res.Meta); a != want || ok != (want != "") || want == "" && o.res.Meta != nil {
		t.Fatalf("author %q (%v, meta %v), want %q", a, ok, o.res.Meta, want)
	}
}

// toolCases has a case for every tool of the type (TestEveryToolHasACase).
var toolCases = map[string]toolCase{
	"drive_list_files": func(t *testing.T, s *standin, in *instance) {
		s.seedFiles(7)
		if p := decode[page](t, in.do(t, "t1", "drive_list_files", `{"limit":3}`, "")); len(p.Items) != 3 || p.NextCursor == "" {
			t.Fatalf("%+v", p)
		}
		textFiles(s)
		wantAuthor(t, in.do(t, "t1", "drive_list_files", `{}`, ""), "") // many owners: none named
	},
	"drive_get_file": func(t *testing.T, s *standin, in *instance) {
		s.seedFiles(2)
		o := in.do(t, "t1", "drive_get_file", `{"file_id":"f01"}`, "")
		if f := decode[model.File](t, o); f.Name != "report 01.txt" {
			t.Fatalf("%+v", f)
		}
		wantAuthor(t, o, "") // no owner, as in a shared drive
		textFiles(s)
		wantAuthor(t, in.do(t, "t1", "drive_get_file", `{"file_id":"txt-1"}`, ""), "me@example.com")
	},
	"drive_search_files": func(t *testing.T, s *standin, in *instance) {
		s.seedFiles(9)
		textFiles(s)
		p := decode[page](t, in.do(t, "t1", "drive_search_files", `{"q":"fullText contains 'hello' and mimeType = 'text/plain'"}`, ""))
		if len(p.Items) != 1 || p.Items[0].Name != "notes.txt" || !strings.Contains(s.query(), "(fullText contains 'hello' and mimeType = 'text/plain')") {
			t.Fatalf("%+v, q %s", p, s.query())
		}
		p = decode[page](t, in.do(t, "t1", "drive_search_files", `{"name_contains":"budget","q":"mimeType = 'application/vnd.google-apps.spreadsheet'"}`, ""))
		if len(p.Items) != 4 { // budget 00, 03, 06 and Budget
			t.Fatalf("%d files: %+v", len(p.Items), p.Items)
		}
		// A page at a time, by cursor; a cursor goes back with its query only.
		args, cursor, seen := `{"q":"mimeType = 'application/vnd.google-apps.spreadsheet'","limit":1}`, "", 0
		for {
			p := decode[page](t, in.do(t, "t1", "drive_search_files", withCursor(args, cursor), ""))
			seen += len(p.Items)
			if cursor = p.NextCursor; cursor == "" {
				break
			}
			_, err := in.call(t, "t1", "drive_search_files", withCursor(`{"q":"mimeType = 'text/plain'","limit":1}`, cursor), "")
			wantCode(t, err, legate.CodeInvalidArgument)
		}
		if seen != 4 {
			t.Fatalf("%d files over the pages; want 4", seen)
		}
	},
	"drive_read_file": func(t *testing.T, s *standin, in *instance) {
		textFiles(s)
		c := decode[contentOut](t, in.do(t, "t1", "drive_read_file", `{"file_id":"txt-1","max_bytes":7}`, ""))
		if c.Text != "ééé" || c.NextOffset != 6 || c.As != "text/plain" { // cut before the fourth é's second byte
			t.Fatalf("%+v", c)
		}
		o := in.do(t, "t1", "drive_read_file", `{"file_id":"txt-1","offset":6}`, "")
		c = decode[contentOut](t, o)
		if c.Text != "éé"+"hello world" || c.NextOffset != 0 {
			t.Fatalf("%+v", c)
		}
		wantAuthor(t, o, "me@example.com")
		if c := decode[contentOut](t, in.do(t, "t1", "drive_read_file", `{"file_id":"gdoc-1"}`, "")); c.As != "text/markdown" || !strings.Contains(c.Text, "The **plan**.") {
			t.Fatalf("%+v", c)
		}
		if c := decode[contentOut](t, in.do(t, "t1", "drive_read_file", `{"file_id":"gsheet-1"}`, "")); c.As != "text/csv" || c.Text != "a,b\n1,2\n" {
			t.Fatalf("%+v", c)
		}
		if c := decode[contentOut](t, in.do(t, "t1", "drive_read_file", `{"file_id":"pdf-1"}`, "")); !c.Binary || c.Text != "" {
			t.Fatalf("%+v", c)
		}
		// Where Drive refuses Markdown, a Doc is read as plain text.
		s.mu.Lock()
		s.noMarkdown = true
		s.mu.Unlock()
		if c := decode[contentOut](t, in.do(t, "t1", "drive_read_file", `{"file_id":"gdoc-1"}`, "")); c.As != "text/plain" || !strings.Contains(c.Text, "plan") {
			t.Fatalf("%+v", c)
		}
	},
	"drive_upload_file": func(t *testing.T, s *standin, in *instance) {
		f := decode[model.File](t, in.do(t, "t1", "drive_upload_file", `{"name":"minutes.md","content":"# Minutes","mime_type":"text/markdown","folder_id":"folder-1"}`, "op-1"))
		stored := s.fileAt(f.ExternalID)
		if f.Name != "minutes.md" || stored == nil || stored.Content != "# Minutes" || stored.Parents[0] != "folder-1" || s.writeCount("upload") != 1 {
			t.Fatalf("%+v, stored %+v", f, stored)
		}
	},
	"drive_share_file": func(t *testing.T, s *standin, in *instance) {
		s.seedFiles(1)
		p := decode[permOut](t, in.do(t, "t1", "drive_share_file", `{"file_id":"f00","type":"user","role":"commenter","email_address":"bob@example.com"}`, "op-1"))
		if p.Role != "commenter" || p.Email != "bob@example.com" || len(s.fileAt("f00").Perms) != 1 {
			t.Fatalf("%+v", p)
		}
		// anyone is refused unless the instance allows public sharing.
		_, err := in.call(t, "t1", "drive_share_file", `{"file_id":"f00","type":"anyone","role":"reader"}`, "op-2")
		wantCode(t, err, legate.CodePermissionDenied)
		_, err = in.call(t, "t1", "drive_share_file", `{"file_id":"f00","type":"user","role":"owner","email_address":"bob@example.com"}`, "op-3")
		wantCode(t, err, legate.CodeInvalidArgument)
		if len(s.fileAt("f00").Perms) != 1 {
			t.Fatal("a refused share reached Drive")
		}
		public := build(t, s, "google", "allow_public_sharing: true")
		if p := decode[permOut](t, public.do(t, "t1", "drive_share_file", `{"file_id":"f00","type":"anyone","role":"reader"}`, "op-4")); p.Type != "anyone" {
			t.Fatalf("%+v", p)
		}
	},
	"docs_read_document": func(t *testing.T, s *standin, in *instance) {
		s.seedDoc()
		d := decode[docOut](t, in.do(t, "t1", "docs_read_document", `{"document_id":"doc-1"}`, ""))
		want := "# Plan\n\n## Goals\n\nShip **fast** and *well*, see [the board](https://example.com/board)\n\n1. first\n1. second\n- a point\n  - a sub-point\n| Owner | Due |\n|---|---|\n| Ada | May |\n"
		if d.Markdown != want || d.Title != "Plan" || d.Bytes != len(want) {
			t.Fatalf("markdown:\n%s\nwant:\n%s", d.Markdown, want)
		}
		part := decode[docOut](t, in.do(t, "t1", "docs_read_document", `{"document_id":"doc-1","max_bytes":20}`, ""))
		rest := decode[docOut](t, in.do(t, "t1", "docs_read_document", fmt.Sprintf(`{"document":%q,"offset":%d}`, d.Ref, part.NextOffset), ""))
		if part.Markdown+rest.Markdown != want || rest.NextOffset != 0 {
			t.Fatalf("in two reads: %q + %q", part.Markdown, rest.Markdown)
		}
	},
	"docs_create_document": func(t *testing.T, s *standin, in *instance) {
		d := decode[docOut](t, in.do(t, "t1", "docs_create_document", `{"title":"Notes","text":"first line\n"}`, "op-1"))
		s.mu.Lock()
		got := s.docs[d.ExternalID]
		s.mu.Unlock()
		if d.Title != "Notes" || got == nil || got.text() != "first line\n\n" || s.writeCount("doc") != 1 {
			t.Fatalf("%+v", d)
		}
	},
	"docs_append_text": func(t *testing.T, s *standin, in *instance) {
		s.seedDoc()
		decode[editOut](t, in.do(t, "t1", "docs_append_text", `{"document_id":"doc-1","text":"\nDone."}`, "op-1"))
		s.mu.Lock()
		text := s.docs["doc-1"].text()
		s.mu.Unlock()
		if !strings.HasSuffix(text, "May\nDone.\n") || s.writeCount("docedit") != 1 {
			t.Fatalf("%q", text)
		}
	},
	"docs_replace_text": func(t *testing.T, s *standin, in *instance) {
		s.seedDoc()
		e := decode[editOut](t, in.do(t, "t1", "docs_replace_text", `{"document_id":"doc-1","find":"ada","replace":"Grace"}`, "op-1"))
		s.mu.Lock()
		text := s.docs["doc-1"].text()
		s.mu.Unlock()
		if e.Replaced != 1 || !strings.Contains(text, "Grace") || strings.Contains(text, "Ada") {
			t.Fatalf("%+v %q", e, text)
		}
	},
	"sheets_read_range": func(t *testing.T, s *standin, in *instance) {
		s.fill("sheet-1", "Sheet1", 5, 2)
		if p := decode[page](t, in.do(t, "t1", "sheets_read_range", `{"spreadsheet_id":"sheet-1","range":"Sheet1!A1:B","limit":2}`, "")); len(p.Rows) != 2 || p.NextCursor == "" {
			t.Fatalf("%+v", p)
		}
	},
	"sheets_list_tabs": func(t *testing.T, s *standin, in *instance) {
		s.fill("sheet-1", "Data", 3, 2)
		b := decode[bookOut](t, in.do(t, "t1", "sheets_list_tabs", `{"spreadsheet_id":"sheet-1"}`, ""))
		if len(b.Tabs) != 2 || b.Tabs[0].Title != "Data" || b.Tabs[1].Title != "Sheet1" || b.Ref == "" {
			t.Fatalf("%+v", b)
		}
	},
	"sheets_update_range": func(t *testing.T, s *standin, in *instance) {
		s.fill("sheet-1", "Sheet1", 3, 3)
		r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_update_range", `{"spreadsheet_id":"sheet-1","range":"Sheet1!B2","rows":[["x",1],[null,true]]}`, "op-1"))
		rows := s.rows("sheet-1", "Sheet1")
		if r.Range != "Sheet1!B2:C3" || strings.Join(rows[1], ",") != "r2c1,x,1" || strings.Join(rows[2], ",") != "r3c1,r3c2,TRUE" {
			t.Fatalf("%+v, sheet %q", r, rows)
		}
	},
	"sheets_append_row": func(t *testing.T, s *standin, in *instance) {
		r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_row", `{"spreadsheet_id":"sheet-1","range":"Sheet1","values":["a",1]}`, "op-1"))
		if r.Range != "Sheet1!A1:B1" || s.appendCount() != 1 {
			t.Fatalf("%+v", r)
		}
	},
	"sheets_append_rows": func(t *testing.T, s *standin, in *instance) {
		s.fill("sheet-1", "Sheet1", 2, 2)
		r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_rows", `{"spreadsheet_id":"sheet-1","range":"Sheet1!A:B","rows":[["a",1],["b",2],["c",3]]}`, "op-1"))
		if r.Range != "Sheet1!A3:B5" || len(r.Rows) != 3 || strings.Join(r.Rows[2], ",") != "c,3" || len(s.rows("sheet-1", "Sheet1")) != 5 || s.appendCount() != 1 {
			t.Fatalf("%+v", r)
		}
	},
	"sheets_create_spreadsheet": func(t *testing.T, s *standin, in *instance) {
		b := decode[bookOut](t, in.do(t, "t1", "sheets_create_spreadsheet", `{"title":"Q3","tabs":["Costs","Sales"]}`, "op-1"))
		if b.Title != "Q3" || len(b.Tabs) != 2 || b.Tabs[0].Title != "Costs" || s.writeCount("create") != 1 {
			t.Fatalf("%+v", b)
		}
	},
}

// Every tool of the catalog has a case, and each passes against the
// stand-in (whose answers are checked against Google's descriptions).
func TestEveryToolHasACase(t *testing.T) {
	for _, tool := range build(t, newStandin(t), "google", "toolsets: [all]").c.Tools() {
		if tool.Toolset == gmail.Toolset || tool.Toolset == calendar.Toolset {
			continue // their packages run every tool against their stand-ins
		}
		t.Run(tool.Name, func(t *testing.T) {
			tc := toolCases[tool.Name]
			if tc == nil {
				t.Fatalf("no case for %s", tool.Name)
			}
			s := newStandin(t)
			tc(t, s, build(t, s, "google", ""))
		})
	}
}
