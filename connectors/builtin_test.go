package connectors_test

import (
	"context"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

type noArgs struct{}

func tool(name string) connectors.Tool {
	return connectors.NewTool(name, "A test tool.", legate.ClassRead,
		func(context.Context, *connectors.Call, *noArgs) (*legate.Result, error) { return nil, nil })
}

func TestBuiltins(t *testing.T) {
	connectors.RegisterBuiltin(connectors.Builtin{Instance: "zz-test", Tool: tool("b")})
	connectors.RegisterBuiltin(connectors.Builtin{Instance: "zz-test", Tool: tool("a")})
	var got []string
	for _, b := range connectors.Builtins() {
		got = append(got, b.Canonical())
	}
	if len(got) < 2 || got[len(got)-2] != "zz-test.a" || got[len(got)-1] != "zz-test.b" {
		t.Fatalf("builtins %v, want zz-test.a then zz-test.b, sorted", got)
	}
	for name, b := range map[string]connectors.Builtin{
		"twice":          {Instance: "zz-test", Tool: tool("a")},
		"bad instance":   {Instance: "Zz.test", Tool: tool("c")},
		"bad tool":       {Instance: "zz-test", Tool: connectors.Tool{Name: "d"}},
		"empty instance": {Tool: tool("e")},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			connectors.RegisterBuiltin(b)
		}()
	}
}
