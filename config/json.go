package config

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/legate-mcp/legate/internal/strictyaml"
	"go.yaml.in/yaml/v3"
)

// JSON returns the file as indented JSON keyed as in config.yaml, every
// key shown; after ApplyDefaults it is the effective configuration.
func (f *File) JSON() ([]byte, error) {
	b, err := yaml.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encoding config: %w", err)
	}
	v, err := YAMLToJSON(b)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(v, "", "  ")
}

// YAMLToJSON decodes a YAML document into JSON values (maps, lists,
// strings, numbers, booleans, nil) by the YAML types of its scalars, so
// that an unquoted 2025-11-25 stays a string rather than becoming a time.
func YAMLToJSON(b []byte) (any, error) {
	doc, err := strictyaml.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return nodeJSON(doc.Content[0])
}

func nodeJSON(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return nodeJSON(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := nodeJSON(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeJSON(c)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	}
	return scalarJSON(n)
}

func scalarJSON(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!int":
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil {
			var v int64
			err = n.Decode(&v) // 0o17, 1_000 and such
			return v, err
		}
		return i, nil
	case "!!float":
		var f float64
		err := n.Decode(&f)
		return f, err
	}
	return n.Value, nil
}
