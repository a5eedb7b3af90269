package strictyaml

import (
	"bytes"
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Parse parses one YAML document. A syntax error names the line the
// problem is on: yaml.v3 names the line where the enclosing collection
// begins instead (line 1 for a key mis-indented on line 3), so the line
// is found as the first whose prefix of the document fails with the same
// problem.
func Parse(b []byte) (*yaml.Node, error) {
	var doc yaml.Node
	err := yaml.Unmarshal(b, &doc)
	if err == nil {
		return &doc, nil
	}
	problem := problemOf(err)
	lines := bytes.SplitAfter(b, []byte("\n"))
	if problem == "" || len(lines) > maxScanLines {
		return nil, err
	}
	for k := 1; k <= len(lines); k++ {
		var n yaml.Node
		if perr := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n); perr != nil && problemOf(perr) == problem {
			return nil, fmt.Errorf("line %d: %s", k, problem)
		}
	}
	return nil, err
}

// maxScanLines bounds the documents whose error line Parse looks for (the
// search parses each prefix).
const maxScanLines = 5000

var yamlErr = regexp.MustCompile(`^yaml: (?:line \d+: )?(.*)$`)

// problemOf is a yaml.v3 syntax error's problem, without its line.
func problemOf(err error) string {
	m := yamlErr.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	return m[1]
}
