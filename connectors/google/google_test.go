package google_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/google"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

var creds = connectortest.Creds{"refresh_token": refreshToken, "client_secret": clientSecret}

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{
		Type:        "google",
		Config:      "client_id: " + clientID + "\noauth_url: http://127.0.0.1:9/token\nsheets_url: http://127.0.0.1:9/\ndrive_url: http://127.0.0.1:9/\nallow_private_networks: true",
		Credentials: creds,
	})
}

func TestSampleBuilds(t *testing.T) {
	b, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Build(t, "google", "google", string(b))
}

type instance struct {
	c   connectors.Connector
	key []byte
	ops connectors.Operations
}

func build(t testing.TB, s *standin, id, extra string) *instance {
	t.Helper()
	u := s.srv.URL
	cfg := fmt.Sprintf("client_id: %s\noauth_url: %s/token\nsheets_url: %s/\ndrive_url: %s\nallow_private_networks: true\nretry_backoff: 1ms\ndocs_url: %s\n%s", clientID, u, u, u, u, extra)
	if !strings.Contains(extra, "operation_marker: true") {
		// Markers off: nothing of Legate's is left in the user's data.
		t.Cleanup(func() {
			if s.holds("lg1-") {
				t.Errorf("with markers off, the stand-in's data holds an operation marker")
			}
		})
	}
	return &instance{c: connectortest.Build(t, "google", id, cfg), key: []byte("key of " + id), ops: saas.NewMemoryOperations()}
}

func (in *instance) call(t testing.TB, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	for _, tl := range in.c.Tools() {
		if tl.Name == tool {
			return tl.Run(context.Background(), &connectors.Call{
				Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
				Credentials: creds, OperationID: op,
				Key: func() []byte { return in.key }, Operations: in.ops,
			})
		}
	}
	t.Fatalf("no tool %s", tool)
	return nil, nil
}

// toolNamed is the instance's tool name.
func toolNamed(t testing.TB, in *instance, name string) connectors.Tool {
	t.Helper()
	for _, tl := range in.c.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return connectors.Tool{}
}

type outcome struct {
	res *legate.Result
	err error
}

func (in *instance) do(t testing.TB, tenant, tool, args, op string) outcome {
	t.Helper()
	res, err := in.call(t, tenant, tool, args, op)
	return outcome{res, err}
}

func decode[T any](t testing.TB, o outcome) T {
	t.Helper()
	if o.err != nil {
		t.Fatal(o.err)
	}
	b, _ := json.Marshal(o.res.Structured)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t testing.TB, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

// page is a page of drive_list_files or sheets_read_range, for walking.
type page struct {
	Items      []model.File `json:"items"`
	Rows       [][]string   `json:"rows"`
	FirstRow   int          `json:"first_row"`
	Range      string       `json:"range"`
	NextCursor string       `json:"next_cursor"`
}

func withCursor(args, cursor string) string {
	if cursor == "" {
		return args
	}
	return strings.TrimSuffix(args, "}") + fmt.Sprintf(`,"cursor":%q}`, cursor)
}

func TestListFilesWalksPages(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(10)
	in := build(t, s, "google", "")
	var names []string
	cursor, pages := "", 0
	for {
		p := decode[page](t, in.do(t, "t1", "drive_list_files", withCursor(`{"limit":3}`, cursor), ""))
		pages++
		for _, f := range p.Items {
			names = append(names, f.Name)
			if f.Contract != "file.v1" || !strings.HasPrefix(f.Ref, "file://") || f.ExternalID == "" || f.URL == "" || f.ParentRef == "" || f.ModifiedAt.IsZero() || f.Provider != "google" {
				t.Errorf("file %+v", f)
			}
		}
		if p.NextCursor == "" {
			break
		}
		if strings.Contains(p.NextCursor, "AI9FV7") {
			t.Fatalf("next_cursor %q shows Drive's page token", p.NextCursor)
		}
		cursor = p.NextCursor
	}
	if pages != 4 || len(names) != 10 || names[0] != "budget 00" || names[9] != "budget 09" {
		t.Fatalf("%d pages: %v; want 4 pages of the 10 files", pages, names)
	}
	if n := s.requests("files"); n != 4 || s.query() != "trashed = false" {
		t.Errorf("%d requests, last q %q", n, s.query())
	}
}

func TestListFilesFilters(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(10)
	in := build(t, s, "google", "")
	sheets := decode[page](t, in.do(t, "t1", "drive_list_files", `{"mime_type":"application/vnd.google-apps.spreadsheet","limit":2}`, ""))
	if len(sheets.Items) != 2 || sheets.Items[0].MimeType != "application/vnd.google-apps.spreadsheet" || sheets.NextCursor == "" {
		t.Fatalf("spreadsheets: %+v", sheets)
	}
	// A cursor goes on with its own filters only.
	_, err := in.call(t, "t1", "drive_list_files", withCursor(`{"limit":2}`, sheets.NextCursor), "")
	wantCode(t, err, legate.CodeInvalidArgument)
	next := decode[page](t, in.do(t, "t1", "drive_list_files", withCursor(`{"mime_type":"application/vnd.google-apps.spreadsheet","limit":2}`, sheets.NextCursor), ""))
	if len(next.Items) != 2 || next.Items[0].Name != "budget 06" {
		t.Fatalf("second page %+v", next)
	}
	// A folder is given by the ref a file's parent_ref holds.
	folder := sheets.Items[0].ParentRef
	inFolder := decode[page](t, in.do(t, "t1", "drive_list_files", fmt.Sprintf(`{"folder":%q,"name_contains":"it's \\ 0"}`, folder), ""))
	if len(inFolder.Items) != 0 || s.query() != `trashed = false and 'folder-1' in parents and name contains 'it\'s \\ 0'` {
		t.Fatalf("q %q, %d items", s.query(), len(inFolder.Items))
	}
	inFolder = decode[page](t, in.do(t, "t1", "drive_list_files", fmt.Sprintf(`{"folder":%q,"name_contains":"BUDGET 0"}`, folder), ""))
	if len(inFolder.Items) != 4 {
		t.Fatalf("%d files in the folder named budget 0*; want 4", len(inFolder.Items))
	}
}

func TestCursorsAndRefsStayWhereTheyWereMade(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(6)
	s.fill("f00", "Sheet1", 5, 2)
	a, b := build(t, s, "google", ""), build(t, s, "google-2", "")
	l := decode[page](t, a.do(t, "t1", "drive_list_files", `{"limit":2}`, ""))
	args := withCursor(`{"limit":2}`, l.NextCursor)
	if _, err := a.call(t, "t1", "drive_list_files", args, ""); err != nil {
		t.Fatal(err)
	}
	before := s.requests("files")
	_, err := a.call(t, "t2", "drive_list_files", args, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = b.call(t, "t1", "drive_list_files", args, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	if s.requests("files") != before {
		t.Errorf("requests sent for refused cursors")
	}
	// A spreadsheet's ref of tenant t1 names nothing for t2 or another instance.
	ref := l.Items[0].Ref
	for name, call := range map[string]func() error{
		"get_file t2": func() error {
			_, err := a.call(t, "t2", "drive_get_file", fmt.Sprintf(`{"file":%q}`, ref), "")
			return err
		},
		"read t2": func() error {
			_, err := a.call(t, "t2", "sheets_read_range", fmt.Sprintf(`{"spreadsheet":%q,"range":"Sheet1"}`, ref), "")
			return err
		},
		"append elsewhere": func() error {
			_, err := b.call(t, "t1", "sheets_append_row", fmt.Sprintf(`{"spreadsheet":%q,"range":"Sheet1","values":["x"]}`, ref), "op-1")
			return err
		},
	} {
		if err := call(); legate.CodeOf(err) != legate.CodeNotFound {
			t.Errorf("%s: %v; want NOT_FOUND", name, err)
		}
	}
	if s.requests("file")+s.requests("get")+s.requests("append") != 0 {
		t.Fatal("a request was sent for a refused ref")
	}
	// The same ref works where it was made.
	r := decode[model.SheetRange](t, a.do(t, "t1", "sheets_read_range", fmt.Sprintf(`{"spreadsheet":%q,"range":"Sheet1"}`, ref), ""))
	if len(r.Rows) != 5 || r.Ref != ref {
		t.Fatalf("read by ref: %+v", r)
	}
}

func TestGetFile(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(3)
	in := build(t, s, "google", "")
	byID := decode[model.File](t, in.do(t, "t1", "drive_get_file", `{"file_id":"f01"}`, ""))
	byRef := decode[model.File](t, in.do(t, "t1", "drive_get_file", fmt.Sprintf(`{"file":%q}`, byID.Ref), ""))
	if byRef.Ref != byID.Ref || byRef.ExternalID != "f01" {
		t.Fatalf("by ref %+v, by id %+v", byRef, byID)
	}
	if byRef.Name != "report 01.txt" || byRef.Size != 1024 || byRef.MimeType != "text/plain" {
		t.Fatalf("file %+v", byRef)
	}
	_, err := in.call(t, "t1", "drive_get_file", `{"file_id":"nope"}`, "")
	wantCode(t, err, legate.CodeNotFound)
	for _, args := range []string{`{}`, `{"file_id":"../x"}`, fmt.Sprintf(`{"file":%q,"file_id":"f01"}`, byRef.Ref)} {
		_, err = in.call(t, "t1", "drive_get_file", args, "")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
}

func TestReadRangePages(t *testing.T) {
	tests := map[string]struct {
		rng   string
		limit int
		col   int      // the first column read
		want  []string // each page: first row number, rows, range
	}{
		"open columns, a window per page": {"Sheet1!A1:B", 100, 1, []string{
			"1 100 Sheet1!A1:B100", "101 100 Sheet1!A101:B200", "201 50 Sheet1!A201:B250"}},
		"a bounded range":            {"Sheet1!B3:C7", 2, 2, []string{"3 2 Sheet1!B3:C4", "5 2 Sheet1!B5:C6", "7 1 Sheet1!B7:C7"}},
		"a whole sheet, by its name": {"Sheet1", 120, 1, []string{"0 120 ", "0 120 ", "0 10 "}},
		"rows 240 to the end":        {"Sheet1!240:300", 10, 1, []string{"240 10 Sheet1!240:249", "250 1 Sheet1!250:250"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			s.fill("sheet-1", "Sheet1", 250, 3)
			in := build(t, s, "google", "")
			var got []string
			cursor, row := "", 1
			for range 10 {
				args := withCursor(fmt.Sprintf(`{"spreadsheet_id":"sheet-1","range":%q,"limit":%d}`, tc.rng, tc.limit), cursor)
				p := decode[page](t, in.do(t, "t1", "sheets_read_range", args, ""))
				rng := p.Range
				if p.FirstRow == 0 {
					rng = ""
				} else {
					row = p.FirstRow
				}
				got = append(got, fmt.Sprintf("%d %d %s", p.FirstRow, len(p.Rows), rng))
				if want := fmt.Sprintf("r%dc%d", row, tc.col); len(p.Rows) == 0 || p.Rows[0][0] != want {
					t.Errorf("page %d starts with %v; want %s", len(got), p.Rows, want)
				}
				row += len(p.Rows)
				if p.NextCursor == "" {
					break
				}
				cursor = p.NextCursor
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Fatalf("pages %q; want %q", got, tc.want)
			}
		})
	}
}

func TestReadRangeCursorIsBoundToItsRange(t *testing.T) {
	s := newStandin(t)
	s.fill("sheet-1", "Sheet1", 20, 2)
	in := build(t, s, "google", "")
	p := decode[page](t, in.do(t, "t1", "sheets_read_range", `{"spreadsheet_id":"sheet-1","range":"Sheet1!A:B","limit":5}`, ""))
	if p.NextCursor == "" || len(p.Rows) != 5 || p.Rows[4][1] != "r5c2" {
		t.Fatalf("first page %+v", p)
	}
	_, err := in.call(t, "t1", "sheets_read_range", withCursor(`{"spreadsheet_id":"sheet-1","range":"Sheet1!A:C","limit":5}`, p.NextCursor), "")
	wantCode(t, err, legate.CodeInvalidArgument)
	next := decode[page](t, in.do(t, "t1", "sheets_read_range", withCursor(`{"spreadsheet_id":"sheet-1","range":"Sheet1!A:B","limit":5}`, p.NextCursor), ""))
	if next.FirstRow != 6 || next.Rows[0][0] != "r6c1" {
		t.Fatalf("second page %+v", next)
	}
	for _, args := range []string{`{"spreadsheet_id":"sheet-1","range":""}`, `{"spreadsheet_id":"sheet-1"}`, `{"range":"Sheet1"}`, `{"spreadsheet_id":"sheet-1","range":"Sheet1","limit":-1}`} {
		_, err := in.call(t, "t1", "sheets_read_range", args, "")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	_, err = in.call(t, "t1", "sheets_read_range", `{"spreadsheet_id":"nope","range":"Sheet1"}`, "")
	wantCode(t, err, legate.CodeNotFound)
}

func TestAppendRow(t *testing.T) {
	s := newStandin(t)
	s.fill("sheet-1", "Sheet1", 2, 3)
	in := build(t, s, "google", "")
	args := `{"spreadsheet_id":"sheet-1","range":"Sheet1!A:C","values":["Ada",36,true,null]}`
	r := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_row", args, "op-1"))
	if r.Contract != "sheet_range.v1" || r.Range != "Sheet1!A3:D3" || r.FirstRow != 3 || strings.Join(r.Rows[0], ",") != "Ada,36,TRUE," || r.ExternalID != "sheet-1" {
		t.Fatalf("appended %+v", r)
	}
	stored := s.rows("sheet-1", "Sheet1")
	if len(stored) != 3 || len(stored[2]) != 4 || strings.Contains(fmt.Sprint(stored), "lg1-") {
		t.Fatalf("the sheet holds %q; want the values alone", stored)
	}
	// The same call again returns the first outcome; the ref reads the sheet.
	again := decode[model.SheetRange](t, in.do(t, "t1", "sheets_append_row", args, "op-1"))
	if again.Range != r.Range || s.appendCount() != 1 {
		t.Fatalf("replay %+v after %d appends", again, s.appendCount())
	}
	read := decode[model.SheetRange](t, in.do(t, "t1", "sheets_read_range", fmt.Sprintf(`{"spreadsheet":%q,"range":"Sheet1!A3:C3"}`, r.Ref), ""))
	if strings.Join(read.Rows[0], ",") != "Ada,36,TRUE" {
		t.Fatalf("read back %+v", read)
	}
	for _, bad := range []string{
		`{"spreadsheet_id":"sheet-1","range":"Sheet1","values":[]}`,
		`{"spreadsheet_id":"sheet-1","range":"Sheet1","values":[{"a":1}]}`,
		`{"spreadsheet_id":"sheet-1","range":"","values":["x"]}`,
		`{"spreadsheet_id":"sheet-1","range":"Sheet1","values":"x"}`,
	} {
		_, err := in.call(t, "t1", "sheets_append_row", bad, "op-bad")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	if s.appendCount() != 1 {
		t.Fatalf("%d appends; want 1", s.appendCount())
	}
}

func TestRateLimitIsBackedOffThenSucceeds(t *testing.T) {
	tests := map[string]func(w http.ResponseWriter){
		"429": func(w http.ResponseWriter) {
			gerror(w, 429, "Quota exceeded", "rateLimitExceeded", "RESOURCE_EXHAUSTED")
		},
		"403 userRateLimitExceeded": func(w http.ResponseWriter) {
			gerror(w, 403, "User rate limit exceeded", "userRateLimitExceeded", "PERMISSION_DENIED")
		},
		"403 rateLimitExceeded": func(w http.ResponseWriter) {
			gerror(w, 403, "Rate limit exceeded", "rateLimitExceeded", "PERMISSION_DENIED")
		},
		"403 RESOURCE_EXHAUSTED, the newer format": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(403)
			w.Write([]byte(`{"error":{"code":403,"message":"Quota exceeded for quota metric 'Read requests'","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMIT_EXCEEDED","domain":"googleapis.com"}]}}`))
		},
	}
	for name, refuse := range tests {
		for _, tool := range []string{"drive_list_files", "sheets_read_range"} {
			t.Run(name+" "+tool, func(t *testing.T) {
				s := newStandin(t)
				s.seedFiles(2)
				s.fill("sheet-1", "Sheet1", 2, 2)
				in := build(t, s, "google", "")
				op := map[string]string{"drive_list_files": "files", "sheets_read_range": "get"}[tool]
				s.fault = func(o string, n int, w http.ResponseWriter, r *http.Request) bool {
					if o == op && n <= 2 {
						refuse(w)
						return true
					}
					return false
				}
				res, err := in.call(t, "t1", tool, `{"spreadsheet_id":"sheet-1","range":"Sheet1"}`, "")
				if tool == "drive_list_files" {
					res, err = in.call(t, "t1", tool, `{}`, "")
				}
				if err != nil || res == nil || s.requests(op) != 3 {
					t.Fatalf("%v after %d requests; want success after 3", err, s.requests(op))
				}
			})
		}
	}
	t.Run("bounded", func(t *testing.T) {
		s := newStandin(t)
		in := build(t, s, "google", "max_attempts: 3")
		s.fault = func(o string, n int, w http.ResponseWriter, r *http.Request) bool {
			if o == "files" {
				gerror(w, 429, "Quota exceeded", "rateLimitExceeded", "RESOURCE_EXHAUSTED")
				return true
			}
			return false
		}
		_, err := in.call(t, "t1", "drive_list_files", `{}`, "")
		wantCode(t, err, legate.CodeRateLimited)
		if s.requests("files") != 3 {
			t.Errorf("%d requests; want 3", s.requests("files"))
		}
	})
}

func TestFailuresMapToTheirClass(t *testing.T) {
	status := func(code int, reason, st string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			// Google echoing what it was sent: the canaries must not leak.
			gerror(w, code, "refused "+clientSecret+" "+refreshToken+" "+accessPrefix+"1-x7", reason, st)
		}
	}
	body := func(b string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/json"); w.Write([]byte(b)) }
	}
	tests := map[string]struct {
		answer   func(w http.ResponseWriter)
		code     legate.Code
		attempts int
	}{
		"401":            {status(401, "authError", "UNAUTHENTICATED"), legate.CodeAuthExpired, 2}, // one refresh, then given up
		"403":            {status(403, "insufficientPermissions", "PERMISSION_DENIED"), legate.CodePermissionDenied, 1},
		"403 quota":      {status(403, "dailyLimitExceeded", "PERMISSION_DENIED"), legate.CodePermissionDenied, 1},
		"404":            {status(404, "notFound", "NOT_FOUND"), legate.CodeNotFound, 1},
		"409":            {status(409, "conflict", "ABORTED"), legate.CodeConflict, 1},
		"400":            {status(400, "badRequest", "INVALID_ARGUMENT"), legate.CodeInvalidArgument, 1},
		"500":            {status(500, "backendError", "INTERNAL"), legate.CodeTransient, 4},
		"503":            {status(503, "backendError", "UNAVAILABLE"), legate.CodeTransient, 4},
		"malformed body": {body(`<html>oops</html>`), legate.CodeAdapterMapping, 1},
		"wrong shape":    {body(`{"files":{"id":"x"}}`), legate.CodeAdapterMapping, 1},
		"no id":          {body(`{"files":[{"name":"x"}]}`), legate.CodeAdapterMapping, 1},
		"bad time":       {body(`{"files":[{"id":"x","name":"x","modifiedTime":"yesterday"}]}`), legate.CodeAdapterMapping, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			in := build(t, s, "google", "")
			s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
				if op == "files" {
					tc.answer(w)
					return true
				}
				return false
			}
			res, err := in.call(t, "t1", "drive_list_files", `{}`, "")
			le := wantCode(t, err, tc.code)
			if n := s.requests("files"); n != tc.attempts {
				t.Errorf("%d requests; want %d", n, tc.attempts)
			}
			if !strings.HasPrefix(le.Message, "google: ") {
				t.Errorf("message %q", le.Message)
			}
			noSecret(t, res, err)
		})
	}
}

// noSecret fails when a canary shows in a result or an error.
func noSecret(t testing.TB, res *legate.Result, err error) {
	t.Helper()
	var parts []string
	if res != nil {
		b, _ := json.Marshal(res.Structured)
		parts = append(parts, string(b), res.Text)
	}
	if err != nil {
		parts = append(parts, err.Error())
		var le *legate.Error
		if errors.As(err, &le) && le.Err != nil {
			parts = append(parts, le.Err.Error())
		}
	}
	for _, p := range parts {
		for _, secret := range []string{"canary5e0d7f1c", "canary-refresh-9a2b3c", "canary-access"} {
			if strings.Contains(p, secret) {
				t.Fatalf("a secret shows in %q", p)
			}
		}
	}
}

func TestLargeAnswersAreRefused(t *testing.T) {
	s := newStandin(t)
	s.fill("sheet-1", "Sheet1", 40, 3)
	in := build(t, s, "google", "")
	// 40 rows of 3 cells is about 800 bytes; 10 rows fit in 400.
	defer google.SetMaxAnswerBytes(400)()
	_, err := in.call(t, "t1", "sheets_read_range", `{"spreadsheet_id":"sheet-1","range":"Sheet1"}`, "")
	if le := wantCode(t, err, legate.CodeInvalidArgument); !strings.Contains(le.Message, "ask for less") || s.requests("get") != 1 {
		t.Fatalf("%v after %d requests", err, s.requests("get"))
	}
	p := decode[page](t, in.do(t, "t1", "sheets_read_range", `{"spreadsheet_id":"sheet-1","range":"Sheet1!A:C","limit":10}`, ""))
	if len(p.Rows) != 10 {
		t.Fatalf("%d rows", len(p.Rows))
	}
}
