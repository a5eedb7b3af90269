package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Error is one problem of a configuration document and where it is: the
// file (empty for a document not read from one) and the line of its key
// (0 when the document has no such key, as a required one left out, in
// which case it is the line of the nearest key above it). Err is most
// often a *strictyaml.PathError, which names the key path.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	case e.File != "":
		return e.File + ": " + e.Err.Error()
	case e.Line > 0:
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// locate gives each of errs the line of its key path in doc, orders them
// by line (those without one last, each group in the order found) and
// joins them; nil for none.
func locate(doc *yaml.Node, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	idx := map[string]int{}
	if doc != nil {
		indexLines(doc, "", idx)
	}
	out := make([]*Error, len(errs))
	for i, err := range errs {
		out[i] = &Error{Line: lineOf(idx, linePath(err)), Err: err}
	}
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Compare(lineOrLast(a.Line), lineOrLast(b.Line))
	})
	list := make([]error, len(out))
	for i, e := range out {
		list[i] = e
	}
	return errors.Join(list...)
}

func lineOrLast(line int) int {
	if line == 0 {
		return int(^uint(0) >> 1)
	}
	return line
}

// inFile names path as the file of each error err joins.
func inFile(path string, err error) error {
	var list []error
	for _, e := range flatten(err) {
		var ce *Error
		if errors.As(e, &ce) {
			c := *ce
			c.File = path
			list = append(list, &c)
			continue
		}
		list = append(list, &Error{File: path, Err: e})
	}
	return errors.Join(list...)
}

// keyPath is the key path an error names: a *strictyaml.PathError's, or
// the start of a message written "path: what is wrong"; "" for none.
func keyPath(err error) string {
	if pe, ok := errors.AsType[*strictyaml.PathError](err); ok {
		return pe.Path
	}
	p, _, ok := strings.Cut(err.Error(), ": ")
	if !ok || strings.ContainsAny(p, " \t\n") {
		return ""
	}
	return p
}

// linePath is the key path to find err's line by: its keyPath, or, for a
// path whose last key holds a space (`header_env.X API: …`), the path up to
// that space, whose line lineOf finds from the keys above it.
func linePath(err error) string {
	if p := keyPath(err); p != "" {
		return p
	}
	p, _, _ := strings.Cut(err.Error(), " ")
	if !strings.ContainsAny(p, ".[") {
		return ""
	}
	return p
}

// indexLines records in idx the line of every key and list item below n,
// by key path as the decoder writes them (`connectors[0].config.url`). A
// key given twice has the line of its last occurrence, the one its
// duplicate key error is about.
func indexLines(n *yaml.Node, path string, idx map[string]int) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			indexLines(c, path, idx)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			p := joinKey(path, k.Value)
			idx[p] = n.Content[i].Line
			indexLines(n.Content[i+1], p, idx)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			idx[p] = c.Line
			indexLines(c, p, idx)
		}
	}
}

// joinKey appends key to path as the decoder does.
func joinKey(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// lineOf is the line of key path p in idx, or of the nearest key above
// it that the document has; 0 for none.
func lineOf(idx map[string]int, p string) int {
	for p != "" {
		if line, ok := idx[p]; ok {
			return line
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return 0
		}
		p = p[:i]
	}
	return 0
}

// decodeConfig decodes the instance's `config:` against its type's spec,
// with path as its key path; an unknown type decodes to nothing (Validate
// reports it).
func (c *Connector) decodeConfig(path string) (any, error) {
	t, ok := connectors.Lookup(c.Type)
	if !ok {
		return nil, nil
	}
	return connectors.DecodeConfig(t, &c.Config, path)
}
