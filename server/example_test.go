package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

// A gateway built from a configuration and a store, and two calls through
// its call path, as a front door makes them: a read the policy allows,
// and a destructive call it denies, which comes back as an error result
// with its code.
func ExampleGateway_Call() {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	cfg, err := config.Parse([]byte("policy:\n  defaults: {read: allow, destructive: deny}\n"), os.LookupEnv)
	if err != nil {
		panic(err)
	}
	type who struct {
		Name string `json:"name"`
	}
	greet := connectors.NewTool("greet", "Greet someone by name.", legate.ClassRead,
		func(_ context.Context, _ *connectors.Call, in *who) (*legate.Result, error) {
			return &legate.Result{Structured: map[string]string{"greeting": "Hello, " + in.Name + "!"}}, nil
		})
	forget := connectors.NewTool("forget", "Forget someone.", legate.ClassDestructive,
		func(context.Context, *connectors.Call, *who) (*legate.Result, error) {
			panic("never runs: the policy denies it")
		})
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st,
		Tools: []connectors.Builtin{{Instance: "demo", Tool: greet}, {Instance: "demo", Tool: forget}}})
	if err != nil {
		panic(err)
	}
	defer gw.Close()

	as := server.CallOptions{Caller: connectors.Caller{Principal: "alice"}}
	for _, name := range []string{"demo.greet", "demo.forget"} {
		res, err := gw.Call(ctx, name, json.RawMessage(`{"name":"Ada"}`), as)
		if err != nil {
			panic(err)
		}
		out, _ := json.Marshal(res.StructuredContent)
		fmt.Println(name, res.IsError, string(out))
	}
	// Output:
	// demo.greet false {"greeting":"Hello, Ada!"}
	// demo.forget true {"error":{"code":"POLICY_DENIED","message":"demo.forget: denied by policy defaults.destructive"}}
}
