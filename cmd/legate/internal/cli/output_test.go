package cli_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
)

// WriteYAML keeps the JSON form's names, order and types: strings that
// look like numbers, booleans, nulls or times stay strings.
func TestWriteYAMLKeepsJSONTypes(t *testing.T) {
	type row struct {
		Name  string          `json:"name"`
		Zip   string          `json:"zip"`
		Flag  string          `json:"flag"`
		Null  string          `json:"null_word"`
		When  time.Time       `json:"when"`
		Count int             `json:"count"`
		Raw   json.RawMessage `json:"raw"`
		Empty []string        `json:"empty"`
	}
	v := []row{{Name: "a: b", Zip: "01234", Flag: "true", Null: "null", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Count: 3,
		Raw: json.RawMessage(`{"z":1,"a":[1,"2"]}`), Empty: []string{}}}
	var buf bytes.Buffer
	if err := cli.WriteYAML(&buf, v); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	want := map[string]any{"name": "a: b", "zip": "01234", "flag": "true", "null_word": "null", "when": "2026-01-02T03:04:05Z",
		"count": 3, "raw": map[string]any{"z": 1, "a": []any{1, "2"}}, "empty": []any{}}
	gb, _ := json.Marshal(got[0])
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("got  %s\nwant %s\nyaml:\n%s", gb, wb, buf.String())
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("- name: ")) {
		t.Errorf("not in the JSON form's order:\n%s", buf.String())
	}
}
