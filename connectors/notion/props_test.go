package notion_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

func TestCreateRowWithProperties(t *testing.T) {
	s := newStandin(t)
	root, _ := workspace(s, 0, 1)
	s.addDatabase(root.id, "Projects", map[string]string{
		"Name": "title", "Notes": "rich_text", "Budget": "number", "Stage": "select", "State": "status",
		"Tags": "multi_select", "Due": "date", "Done": "checkbox", "Site": "url", "Mail": "email",
		"Phone": "phone_number", "Related": "relation", "Owner": "people", "Score": "formula",
	})
	in := build(t, s, "notion", "")
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database","query":"Projects"}`, "")).Items[0].Ref
	note := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"note 0"}`, "")).Items[0].Ref
	props := fmt.Sprintf(`{"Notes":"long text","Budget":1250.5,"Stage":"Build","State":"In progress","Tags":["a","b"],
		"Due":"2026-01-31/2026-02-02T10:00:00Z","Done":true,"Site":"https://acme.example","Mail":"a@acme.example",
		"Phone":"+33 1 23 45 67 89","Related":[%q]}`, note)
	row := decode[model.Page](t, in.do(t, "t1", "create_page", fmt.Sprintf(`{"parent":%q,"title":"Launch","properties":%s}`, dbRef, props), "op-row"))
	want := map[string]any{
		"Name": "Launch", "Notes": "long text", "Budget": 1250.5, "Stage": "Build", "State": "In progress",
		"Tags": []any{"a", "b"}, "Due": "2026-01-31T00:00:00Z/2026-02-02T10:00:00Z", "Done": true,
		"Site": "https://acme.example", "Mail": "a@acme.example", "Phone": "+33 1 23 45 67 89", "Related": []any{note},
	}
	if got, wantS := fmt.Sprint(row.Properties), fmt.Sprint(want); got != wantS {
		t.Fatalf("properties\n got %s\nwant %s", got, wantS)
	}
	if s.count("get_data_source") != 1 || s.writeCount() != 1 {
		t.Fatalf("%d schema reads, %d writes", s.count("get_data_source"), s.writeCount())
	}

	tests := map[string]struct {
		args string
		code legate.Code
		says string
	}{
		"unknown property": {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Colour":"red"}}`, dbRef), legate.CodeInvalidArgument, `no property "Colour"`},
		"wrong value":      {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Budget":"a lot"}}`, dbRef), legate.CodeInvalidArgument, "properties.Budget: a number property takes a number"},
		"bad date":         {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Due":"tomorrow"}}`, dbRef), legate.CodeInvalidArgument, "properties.Due"},
		"title":            {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Name":"y"}}`, dbRef), legate.CodeInvalidArgument, "title argument"},
		"unsupported type": {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Score":1}}`, dbRef), legate.CodeInvalidArgument, "a formula property cannot be set"},
		"unknown user":     {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Owner":["bob"]}}`, dbRef), legate.CodeNotFound, "people"},
		"page parent":      {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Notes":"y"}}`, note), legate.CodeInvalidArgument, "only a page in a database"},
		"foreign relation": {fmt.Sprintf(`{"parent":%q,"title":"x","properties":{"Related":[%q]}}`, dbRef, strings.Replace(note, "page://", "page://x", 1)), legate.CodeNotFound, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := in.call(t, "t1", "create_page", tc.args, "op-"+name)
			if le := wantCode(t, err, tc.code); !strings.Contains(le.Message, tc.says) {
				t.Errorf("message %q does not say %q", le.Message, tc.says)
			}
			if s.writeCount() != 1 {
				t.Fatalf("%d writes", s.writeCount())
			}
		})
	}
}

// A write whose answer was lost under a parent too long to read back is
// CONFLICT: the connector cannot tell whether it happened, and does not
// write again.
func TestLostWriteUnderALongPageIsConflict(t *testing.T) {
	s := newStandin(t)
	root, _ := workspace(s, 0, 0)
	s.mu.Lock()
	for i := range 1000 {
		s.children[root.id] = append(s.children[root.id], &block{id: s.newID(), typ: "paragraph", text: fmt.Sprint("line ", i), color: "default"})
	}
	s.mu.Unlock()
	in := build(t, s, "notion", "max_attempts: 1")
	ref := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"Team"}`, "")).Items[0].Ref
	s.afterWrite = func(label string, w http.ResponseWriter, r *http.Request) bool {
		hangUp(w)
		return true
	}
	args := fmt.Sprintf(`{"parent":%q,"text":"once"}`, ref)
	_, err := in.call(t, "t1", "append_block", args, "op-long")
	wantCode(t, err, legate.CodeTransient)
	_, err = in.call(t, "t1", "append_block", args, "op-long")
	if le := wantCode(t, err, legate.CodeConflict); !strings.Contains(le.Message, "cannot tell") {
		t.Errorf("message %q", le.Message)
	}
	if s.writeCount() != 1 || s.count("children") != 10 {
		t.Fatalf("%d writes, %d listings", s.writeCount(), s.count("children"))
	}
}
