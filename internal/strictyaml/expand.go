package strictyaml

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var envRef = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Expand replaces ${NAME} in every scalar value of n (never in keys) with
// lookup(NAME); $$ is a literal $. Every unset variable is an error naming
// its key path, below path. A plain scalar that held a reference is
// re-resolved after expansion, so `port: ${PORT}` decodes as a number.
func Expand(n *yaml.Node, path string, lookup func(string) (string, bool)) error {
	switch n.Kind {
	case yaml.DocumentNode:
		var errs []error
		for _, c := range n.Content {
			errs = append(errs, Expand(c, path, lookup))
		}
		return errors.Join(errs...)
	case yaml.MappingNode:
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			errs = append(errs, Expand(n.Content[i+1], join(path, n.Content[i].Value), lookup))
		}
		return errors.Join(errs...)
	case yaml.SequenceNode:
		var errs []error
		for i, c := range n.Content {
			errs = append(errs, Expand(c, fmt.Sprintf("%s[%d]", path, i), lookup))
		}
		return errors.Join(errs...)
	case yaml.ScalarNode:
		return expandScalar(n, path, lookup)
	}
	return nil
}

func expandScalar(n *yaml.Node, path string, lookup func(string) (string, bool)) error {
	if !strings.Contains(n.Value, "$") {
		return nil
	}
	var missing []string
	n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
		if m == "$$" {
			return "$"
		}
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return &PathError{Path: path, Msg: fmt.Sprintf("environment variable %s is not set", strings.Join(missing, ", "))}
	}
	if n.Tag == "!!str" && n.Style == 0 {
		n.Tag = "" // let the expanded value be read as a number or bool
	}
	return nil
}
