package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The instruction is a template over a JSON context: {{$.some.path}} reads
// the context, {{$this}} and {{$this.field}} the slice of it a run was
// handed. Scoped to an array ($.tasks[*]), it runs once per element.

var placeholder = regexp.MustCompile(`\{\{\s*(\$[^{}]*?)\s*\}\}`)

// Render fills tmpl's placeholders from root (the context) and this (the
// element of the run). A string is put as it is, any other value as JSON;
// a path that leads nowhere is an error naming it.
func Render(tmpl string, root, this any) (string, error) {
	var err error
	out := placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		path := placeholder.FindStringSubmatch(m)[1]
		v, e := Lookup(path, root, this)
		if e != nil {
			if err == nil {
				err = e
			}
			return m
		}
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	})
	return out, err
}

// Lookup reads path ($, $.a.b, $.list[2].name, $this, $this.field) in
// root or this.
func Lookup(path string, root, this any) (any, error) {
	var v any
	rest := ""
	switch {
	case path == "$this" || strings.HasPrefix(path, "$this.") || strings.HasPrefix(path, "$this["):
		v, rest = this, strings.TrimPrefix(path, "$this")
	case path == "$" || strings.HasPrefix(path, "$.") || strings.HasPrefix(path, "$["):
		v, rest = root, strings.TrimPrefix(path, "$")
	default:
		return nil, fmt.Errorf("template: %q: a path starts with $ (the context) or $this (the run's element)", path)
	}
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			key := rest[:n]
			rest = rest[n:]
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("template: %s: %q of something that is not an object", path, key)
			}
			if v, ok = m[key]; !ok {
				return nil, fmt.Errorf("template: %s: no %q in the context", path, key)
			}
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("template: %s: unclosed [", path)
			}
			i, err := strconv.Atoi(rest[1:end])
			rest = rest[end+1:]
			a, ok := v.([]any)
			if err != nil || !ok || i < 0 || i >= len(a) {
				return nil, fmt.Errorf("template: %s: no element %s", path, rest)
			}
			v = a[i]
		default:
			return nil, fmt.Errorf("template: %s: cannot read %q", path, rest)
		}
	}
	return v, nil
}

// Scope is the elements of the runs a scope selects: the array at path
// for "PATH[*]", else the one value at the path ($ when empty).
func Scope(root any, scope string) ([]any, error) {
	scope = strings.TrimSpace(scope)
	if scope == "" {
		return []any{root}, nil
	}
	path, each := strings.CutSuffix(scope, "[*]")
	v, err := Lookup(path, root, nil)
	if err != nil {
		return nil, err
	}
	if !each {
		return []any{v}, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("scope %s: %s is not an array", scope, path)
	}
	return a, nil
}

// RunEach runs a templated request: its instruction and workspace
// rendered for each element scope selects of context, one run after
// another, each continuing the conversation of the one before unless
// fresh (unrelated tasks). Every template is rendered before the first
// run, so a bad path runs nothing.
func (r *Runner) RunEach(ctx context.Context, req Request, context any, scope string, fresh bool) ([]*Record, error) {
	elems, err := Scope(context, scope)
	if err != nil {
		return nil, err
	}
	reqs := make([]Request, len(elems))
	for i, el := range elems {
		reqs[i] = req
		if reqs[i].Instruction, err = Render(req.Instruction, context, el); err != nil {
			return nil, err
		}
		if reqs[i].Workspace, err = Render(req.Workspace, context, el); err != nil {
			return nil, err
		}
	}
	out := []*Record{}
	for _, one := range reqs {
		if !fresh && len(out) > 0 {
			one.Resume = out[len(out)-1].ID
		}
		rec, err := r.Run(ctx, one)
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	return out, nil
}
