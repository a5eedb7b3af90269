package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// GreeterConfig is the configuration of the example's connector type: its
// fields' tags are its schema (names, descriptions, defaults, required).
type GreeterConfig struct {
	Greeting string `yaml:"greeting" desc:"what each greeting starts with" default:"Hello"`
}

// greeter is one configured instance.
type greeter struct{ cfg *GreeterConfig }

func (g *greeter) Validate() error                                    { return nil }
func (g *greeter) Test(context.Context, connectors.Credentials) error { return nil }

func (g *greeter) Tools() []connectors.Tool {
	type in struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	return []connectors.Tool{connectors.NewTool("greet", "Greet someone by name.", legate.ClassRead,
		func(_ context.Context, _ *connectors.Call, in *in) (*legate.Result, error) {
			return &legate.Result{Structured: map[string]string{"greeting": g.cfg.Greeting + ", " + in.Name + "!"}}, nil
		})}
}

// A connector type registers itself from its package's init with
// connectors.Register; connectors/all imports the package. Here it is
// registered and built from a config section, and its tool called, as
// the gateway does.
func Example() {
	typ := connectors.TypeOf(connectors.Info{Name: "greeter", Description: "Greets people"},
		func(_ connectors.Instance, cfg *GreeterConfig) (connectors.Connector, error) {
			return &greeter{cfg: cfg}, nil
		})
	connectors.Register(typ)

	var section yaml.Node
	if err := yaml.Unmarshal([]byte("greeting: Bonjour\n"), &section); err != nil {
		panic(err)
	}
	c, err := connectors.Build(typ, "greeter", section.Content[0], "connectors[0]")
	if err != nil {
		panic(err)
	}
	tool := c.Tools()[0]
	res, err := tool.Run(context.Background(), &connectors.Call{Tool: tool.Name, Args: json.RawMessage(`{"name":"Ada"}`)})
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(res.Structured)
	fmt.Println(tool.Name, string(out))

	// A config with a mistake names its key path.
	if err := yaml.Unmarshal([]byte("greting: Hi\n"), &section); err != nil {
		panic(err)
	}
	_, err = connectors.Build(typ, "greeter", section.Content[0], "connectors[0]")
	fmt.Println(err)
	// Output:
	// greet {"greeting":"Bonjour, Ada!"}
	// connectors[0].config.greting: unknown key (did you mean "greeting"?)
}
