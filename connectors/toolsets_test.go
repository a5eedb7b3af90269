package connectors_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

func TestSelectTools(t *testing.T) {
	sets := []connectors.Toolset{{Name: "issues", Default: true}, {Name: "pull_requests", Default: true}, {Name: "actions"}}
	tools := []connectors.Tool{
		{Name: "whoami", Class: legate.ClassRead},
		{Name: "get_issue", Class: legate.ClassRead, Toolset: "issues"},
		{Name: "create_issue", Class: legate.ClassWrite, Toolset: "issues"},
		{Name: "get_pull", Class: legate.ClassRead, Toolset: "pull_requests"},
		{Name: "list_runs", Class: legate.ClassRead, Toolset: "actions"},
		{Name: "rerun", Class: legate.ClassWrite, Toolset: "actions"},
	}
	names := func(ts []connectors.Tool) string {
		var n []string
		for _, t := range ts {
			n = append(n, t.Name)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		chosen   []string
		readOnly bool
		want     string
	}{
		{nil, false, "whoami,get_issue,create_issue,get_pull"},
		{[]string{"default"}, false, "whoami,get_issue,create_issue,get_pull"},
		{[]string{"actions"}, false, "whoami,list_runs,rerun"},
		{[]string{"default", "actions"}, true, "whoami,get_issue,get_pull,list_runs"},
		{[]string{"all"}, false, "whoami,get_issue,create_issue,get_pull,list_runs,rerun"},
	} {
		got, err := connectors.SelectTools("github", sets, c.chosen, c.readOnly, tools)
		if err != nil || names(got) != c.want {
			t.Errorf("SelectTools(%v, readOnly %v) = %s, %v; want %s", c.chosen, c.readOnly, names(got), err, c.want)
		}
	}
	_, err := connectors.SelectTools("github", sets, []string{"pulls"}, false, tools)
	var fe *legate.FieldError
	if !errors.As(err, &fe) || fe.Field != "toolsets" || !strings.Contains(err.Error(), `"pulls"`) || !strings.Contains(err.Error(), "pull_requests (default)") {
		t.Errorf("an unknown toolset: %v; want a field error naming it and the known ones", err)
	}
}
