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
	in := build(t, s, "google", "")
	args := map[string]string{
		"sheets_read_range": `{"spreadsheet_id":"sheet-1","range":"Sheet1!A1:C","limit":2}`,
		"drive_list_files":  `{"limit":2}`,
		"drive_get_file":    `{"file_id":"f01"}`,
		"sheets_append_row": `{"spreadsheet_id":"sheet-1","range":"Sheet1","values":["a",1,false,null]}`,
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
