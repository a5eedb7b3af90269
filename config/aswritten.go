package config

import (
	"cmp"
	"slices"
	"strings"
)

// minWritten is the shortest value AsWritten writes back as its `${NAME}`:
// a shorter one would rewrite unrelated text, and holds no secret.
const minWritten = 4

// AsWritten is v, a value decoded from the file (a connector instance's
// config: strings, maps and lists), with every value that `${NAME}` was
// replaced by written back as `${NAME}`: what an instance's config shows
// (legate connector show, GET /admin/v1/connectors/{id}, the panel), so
// that a secret expanded into a plain field is never shown. v is not
// changed.
func (f *File) AsWritten(v any) any {
	if f == nil || len(f.expanded) == 0 {
		return v
	}
	names := make([]string, 0, len(f.expanded))
	for name, value := range f.expanded {
		if len(value) >= minWritten {
			names = append(names, name)
		}
	}
	// The longest value first, so that one holding another is written whole.
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(len(f.expanded[b])-len(f.expanded[a]), strings.Compare(a, b))
	})
	pairs := make([]string, 0, 2*len(names))
	for _, name := range names {
		pairs = append(pairs, f.expanded[name], "${"+name+"}")
	}
	return written(v, strings.NewReplacer(pairs...))
}

// written is v with r applied to every string in it.
func written(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = written(x, r)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = written(x, r)
		}
		return out
	}
	return v
}
