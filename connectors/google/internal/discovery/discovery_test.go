package discovery_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/google/internal/discovery"
)

// fakeT records what Check reports instead of failing.
type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func get(t *testing.T, h http.Handler, path string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func answering(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		io.WriteString(w, body)
	})
}

// The checker accepts an answer Drive describes, and fails a stand-in
// that answers a field Drive does not have, or one of another type.
func TestCheckFindsDrift(t *testing.T) {
	tests := map[string]struct {
		path, body string
		want       string // in the report; "" for none
	}{
		"a described file":           {"/drive/v3/files/f1", `{"id":"f1","name":"a","mimeType":"text/plain","size":"12","owners":[{"emailAddress":"a@b.c"}]}`, ""},
		"an undeclared field":        {"/drive/v3/files/f1", `{"id":"f1","name":"a","ownerEmail":"a@b.c"}`, "files.get.ownerEmail: a field the description does not have"},
		"an int64 as a number":       {"/drive/v3/files/f1", `{"id":"f1","size":12}`, "File.size: a number, want a string"},
		"a nested undeclared field":  {"/drive/v3/files", `{"files":[{"id":"f1","colour":"red"}]}`, "colour: a field the description does not have"},
		"a list of the wrong type":   {"/drive/v3/files", `{"files":{"id":"f1"}}`, "FileList.files: an object, want an array"},
		"another API passes through": {"/v4/spreadsheets/s1", `{"whatever":1}`, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ft := &fakeT{TB: t}
			get(t, discovery.Check(ft, "drive/v3", answering(tc.body)), tc.path)
			report := strings.Join(ft.errors, "\n")
			switch {
			case tc.want == "" && report != "":
				t.Fatalf("reported:\n%s", report)
			case tc.want != "" && !strings.Contains(report, strings.TrimPrefix(tc.want, "files.get.")):
				t.Fatalf("report %q; want %q", report, tc.want)
			}
		})
	}
}

func TestMethodsByPath(t *testing.T) {
	for api, cases := range map[string]map[string]string{
		"drive/v3":  {"GET /drive/v3/files": "drive.files.list", "POST /upload/drive/v3/files": "drive.files.create", "GET /drive/v3/files/x/export": "drive.files.export", "POST /drive/v3/files/x/permissions": "drive.permissions.create"},
		"sheets/v4": {"GET /v4/spreadsheets/s/values/Sheet1!A1:B2": "sheets.spreadsheets.values.get", "POST /v4/spreadsheets/s/values/Sheet1:append": "sheets.spreadsheets.values.append", "GET /v4/spreadsheets/s": "sheets.spreadsheets.get"},
		"docs/v1":   {"POST /v1/documents/d:batchUpdate": "docs.documents.batchUpdate", "GET /v1/documents/d": "docs.documents.get"},
	} {
		d, err := discovery.Load(api)
		if err != nil {
			t.Fatal(err)
		}
		for req, want := range cases {
			method, path, _ := strings.Cut(req, " ")
			if m := d.Method(method, path); m == nil || m.ID != want {
				t.Errorf("%s %s: %v; want %s", api, req, m, want)
			}
		}
	}
}

// An answer marked a deliberate fault is not held against the stand-in.
func TestFaultsAreNotChecked(t *testing.T) {
	ft := &fakeT{TB: t}
	get(t, discovery.Check(ft, "drive/v3", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		discovery.Fault(w)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"files":"not a list"}`)
	})), "/drive/v3/files")
	if len(ft.errors) > 0 {
		t.Fatalf("reported %q", ft.errors)
	}
}
