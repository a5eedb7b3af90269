package config_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Every enum and lower bound of the spec is enforced, and its error names
// the key at fault: each is broken in turn in config.yaml.example (which
// shows every key) and the load must fail at that key's path.
func TestEveryBoundIsEnforcedAtItsKey(t *testing.T) {
	src, err := os.ReadFile("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, k := range config.Spec() {
		bad := ""
		switch kind := strictyaml.Kind(k.Type); {
		case len(k.Enum) > 0:
			bad = "not-a-choice"
		case k.Min == "0" && kind == strictyaml.KindDuration:
			bad = "-1s"
		case k.Min == "0" && kind == strictyaml.KindInt:
			bad = "-1"
		default:
			continue
		}
		checked++
		t.Run(k.Path, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal(src, &doc); err != nil {
				t.Fatal(err)
			}
			at, ok := setAt(doc.Content[0], strings.Split(k.Path, "."), "", bad)
			if !ok {
				t.Fatalf("config.yaml.example has no %s", k.Path)
			}
			b, err := yaml.Marshal(&doc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = config.Parse(b, env(nil))
			if err == nil || !strings.Contains(err.Error(), at+": ") {
				t.Fatalf("%s: %s was accepted or reported elsewhere: %v", at, bad, err)
			}
		})
	}
	if checked < 20 {
		t.Fatalf("only %d bounded keys", checked)
	}
}

// setAt sets the scalar at the spec path segs below n to val, in the first
// list item that has it, and returns its concrete path ("upstreams[1].session").
func setAt(n *yaml.Node, segs []string, at, val string) (string, bool) {
	name, list := strings.CutSuffix(segs[0], "[]")
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != name {
			continue
		}
		p, v := join(at, name), n.Content[i+1]
		switch {
		case list:
			for j, item := range v.Content {
				if q, ok := setAt(item, segs[1:], fmt.Sprintf("%s[%d]", p, j), val); ok {
					return q, true
				}
			}
			return "", false
		case len(segs) > 1:
			return setAt(v, segs[1:], p, val)
		}
		*v = yaml.Node{Kind: yaml.ScalarNode, Value: val}
		return p, true
	}
	return "", false
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}
