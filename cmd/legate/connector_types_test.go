package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

// connector types TYPE shows one type: its description, config fields,
// credentials, and the tools of an instance with the default config with
// their classes; as a table or -o json. Every registered type can be shown.
func TestConnectorTypesShowsOneType(t *testing.T) {
	out, err := runCLI(t, "connector", "types", "postgres", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var d struct {
		Name, Description string
		Fields            []struct{ Name, Kind, Default, Description string }
		Credentials       []struct{ Name string }
		Tools             []struct {
			Name, Class, Description string
			ByArguments              bool `json:"class_by_arguments"`
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	port := slices.IndexFunc(d.Fields, func(f struct{ Name, Kind, Default, Description string }) bool { return f.Name == "port" })
	if d.Name != "postgres" || d.Description == "" || port < 0 || d.Fields[port].Kind != "int" || !strings.Contains(d.Fields[port].Description, "5432") { // its default, unless dsn is given
		t.Errorf("type, description or fields: %s", out)
	}
	if len(d.Credentials) != 1 || d.Credentials[0].Name != "password" {
		t.Errorf("credentials: %s", out)
	}
	tools := map[string]string{}
	for _, tool := range d.Tools {
		tools[tool.Name] = tool.Class
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	if tools["query"] != "read" || tools["schema"] != "read" || tools["execute"] != "write" {
		t.Errorf("tools and classes %v: %s", tools, out)
	}

	out, err = runCLI(t, "connector", "types", "postgres")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"postgres — ", "config.port", "default 5432 unless dsn is given", "credentials.password", "secret", "query", "read", "execute"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	if _, err := runCLI(t, "connector", "types", "nosuch"); err == nil || !strings.Contains(err.Error(), `unknown connector type "nosuch" (known: `) ||
		!strings.Contains(err.Error(), "postgres") {
		t.Errorf("unknown type: %v", err)
	}
	for _, name := range connectors.TypeNames() {
		out, err := runCLI(t, "connector", "types", name, "-o", "json")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var d struct{ Tools []json.RawMessage }
		if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Tools) == 0 {
			t.Errorf("%s: no tools (%v): %s", name, err, out)
		}
	}
}

// A type whose tools fall into toolsets lists them all, each with its
// toolset, and marks those an instance with the default config offers.
func TestConnectorTypesShowsToolsets(t *testing.T) {
	out, err := runCLI(t, "connector", "types", "github", "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var d struct {
		Tools []struct {
			Name, Toolset string
			Default       bool
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range d.Tools {
		got[tool.Name] = fmt.Sprintf("%s %v", tool.Toolset, tool.Default)
	}
	for name, want := range map[string]string{"get_issue": "issues true", "merge_pull": "pull_requests true", "rerun_workflow_run": "actions false"} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q (toolset, offered by default)", name, got[name], want)
		}
	}
	out, err = runCLI(t, "connector", "types", "github")
	if err != nil || !strings.Contains(out, "* get_issue") || !strings.Contains(out, "  rerun_workflow_run") {
		t.Errorf("the table does not mark the default tools: %v\n%s", err, out)
	}
}
