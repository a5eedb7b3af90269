package connectors_test

import (
	"context"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
)

type probeConfig struct {
	Greeting string `yaml:"greeting" default:"hello" desc:"What to say"`
	Times    int    `yaml:"times" desc:"How often"`
}

type probe struct {
	id  string
	cfg probeConfig
}

func (p *probe) Validate() error                                    { return nil }
func (p *probe) Test(context.Context, connectors.Credentials) error { return nil }
func (p *probe) Tools() []connectors.Tool                           { return nil }

var probeType = connectors.TypeOf(connectors.Info{Name: "typeof-probe", Description: "a probe"},
	func(inst connectors.Instance, cfg *probeConfig) (connectors.Connector, error) {
		return &probe{id: inst.ID, cfg: *cfg}, nil
	})

// The constructor gets the decoded config, typed, defaults applied.
func TestTypeOfDecodesTyped(t *testing.T) {
	var node yaml.Node
	if err := yaml.Unmarshal([]byte("times: 3"), &node); err != nil {
		t.Fatal(err)
	}
	cfg, err := connectors.DecodeConfig(probeType, &node, "c")
	if err != nil {
		t.Fatal(err)
	}
	c, err := probeType.New(connectors.Instance{ID: "p1", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.(*probe); p.id != "p1" || p.cfg != (probeConfig{Greeting: "hello", Times: 3}) {
		t.Errorf("instance %+v", p)
	}
	fields, err := connectors.FieldsOf(probeType.Config())
	if err != nil || len(fields) != 2 || fields[0].Name != "greeting" {
		t.Errorf("fields %v, %v", fields, err)
	}
}

func TestTypeOfRefusesForeignConfig(t *testing.T) {
	for name, cfg := range map[string]any{"string": "nope", "nil": nil, "nil pointer": (*probeConfig)(nil), "value": probeConfig{}} {
		t.Run(name, func(t *testing.T) {
			_, err := probeType.New(connectors.Instance{Config: cfg})
			if err == nil || !strings.Contains(err.Error(), "typeof-probe: config is") {
				t.Errorf("error %v; want the foreign config refused", err)
			}
		})
	}
}

func TestRegisterPanics(t *testing.T) {
	connectors.Register(connectors.TypeOf(connectors.Info{Name: "typeof-registered", Description: "once"},
		func(connectors.Instance, *probeConfig) (connectors.Connector, error) { return &probe{}, nil }))
	tests := map[string]connectors.Type{
		"empty name":     connectors.TypeOf(connectors.Info{}, func(connectors.Instance, *probeConfig) (connectors.Connector, error) { return nil, nil }),
		"invalid name":   connectors.TypeOf(connectors.Info{Name: "Bad_Name"}, func(connectors.Instance, *probeConfig) (connectors.Connector, error) { return nil, nil }),
		"duplicate":      connectors.TypeOf(connectors.Info{Name: "typeof-registered"}, func(connectors.Instance, *probeConfig) (connectors.Connector, error) { return nil, nil }),
		"no constructor": connectors.TypeOf[probeConfig](connectors.Info{Name: "typeof-nonew"}, nil),
		"config not a struct": connectors.TypeOf(connectors.Info{Name: "typeof-notstruct"},
			func(connectors.Instance, *string) (connectors.Connector, error) { return nil, nil }),
		"field without desc": connectors.TypeOf(connectors.Info{Name: "typeof-nodesc"},
			func(connectors.Instance, *struct {
				X string `yaml:"x"`
			}) (connectors.Connector, error) {
				return nil, nil
			}),
	}
	for name, typ := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register accepted %q", typ.Name)
				}
			}()
			connectors.Register(typ)
		})
	}
	if _, ok := connectors.Lookup("typeof-nonew"); ok {
		t.Error("a refused type is registered")
	}
	names := connectors.TypeNames()
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Errorf("type names not sorted: %v", names)
		}
	}
}
