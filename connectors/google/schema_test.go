package google_test

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// Every tool's result is what its output schema says: clients check
// structured content against it.
func TestResultsMatchTheirOutputSchema(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(3)
	s.fill("sheet-1", "Sheet1", 5, 3)
	s.seedDoc()
	textFiles(s)
	in := build(t, s, "google", "")
	args := map[string]string{
		"sheets_read_range":         `{"spreadsheet_id":"sheet-1","range":"Sheet1!A1:C","limit":2}`,
		"drive_list_files":          `{"limit":2}`,
		"drive_get_file":            `{"file_id":"f01"}`,
		"sheets_append_row":         `{"spreadsheet_id":"sheet-1","range":"Sheet1","values":["a",1,false,null]}`,
		"drive_search_files":        `{"q":"mimeType = 'text/plain'"}`,
		"drive_read_file":           `{"file_id":"gdoc-1"}`,
		"drive_upload_file":         `{"name":"a.txt","content":"a"}`,
		"drive_share_file":          `{"file_id":"f01","type":"domain","role":"reader","domain":"example.com"}`,
		"docs_read_document":        `{"document_id":"doc-1"}`,
		"docs_create_document":      `{"title":"New"}`,
		"docs_append_text":          `{"document_id":"doc-1","text":"x"}`,
		"docs_replace_text":         `{"document_id":"doc-1","find":"Plan","replace":"Roadmap"}`,
		"sheets_list_tabs":          `{"spreadsheet_id":"sheet-1"}`,
		"sheets_update_range":       `{"spreadsheet_id":"sheet-1","range":"Sheet1!A1","rows":[["a"]]}`,
		"sheets_append_rows":        `{"spreadsheet_id":"sheet-1","range":"Sheet1","rows":[["a"],["b"]]}`,
		"sheets_create_spreadsheet": `{"title":"New"}`,
	}
	for _, tool := range in.c.Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			var schema jsonschema.Schema
			if err := json.Unmarshal(tool.OutputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			resolved, err := schema.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := in.call(t, "t1", tool.Name, args[tool.Name], "op-"+tool.Name)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res.Structured)
			var v any
			json.Unmarshal(b, &v)
			if err := resolved.Validate(v); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
		})
	}
}
