// Package didyoumean names the known names closest to one that is none,
// as the CLI does for a mistyped command: the same measure, cobra's
// (Levenshtein distance up to two, ignoring case, or a known name that
// starts with the typed one), so that `legate tols` and a call to
// `github__get_isue` suggest alike.
package didyoumean

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
)

// Max is how many names Closest returns at most.
const Max = 3

// Closest returns up to Max of known that are close to name, in the order
// of known. When no whole name is close, the last parts of the names (after
// the final "__" or ".", the tool's own name) are compared, so a caller
// who typed a tool's name without its prefix is told the full one.
func Closest(name string, known []string) []string {
	known = slices.Compact(slices.Clone(known))
	if out := suggest(name, known, func(s string) string { return s }); len(out) > 0 {
		return out
	}
	return suggest(tail(name), known, tail)
}

// suggest asks cobra which of known, each seen through key, are close to
// name: each name becomes a command of a root that is never run.
func suggest(name string, known []string, key func(string) string) []string {
	if name == "" {
		return nil
	}
	root := &cobra.Command{Use: "tools"}
	root.SuggestionsMinimumDistance = 2
	byKey := map[string][]string{}
	noop := func(*cobra.Command, []string) {}
	for _, k := range known {
		kk := key(k)
		if kk == "" || strings.ContainsAny(kk, " \t") {
			continue // cobra's command name is the first word of Use
		}
		if _, seen := byKey[kk]; !seen {
			root.AddCommand(&cobra.Command{Use: kk, Run: noop})
		}
		byKey[kk] = append(byKey[kk], k)
	}
	var out []string
	for _, s := range root.SuggestionsFor(name) {
		for _, k := range byKey[s] {
			if len(out) == Max {
				return out
			}
			if k != name {
				out = append(out, k)
			}
		}
	}
	return out
}

// tail is the last part of a tool name: after its final "__" or ".".
func tail(s string) string {
	if i := strings.LastIndex(s, "__"); i >= 0 {
		s = s[i+2:]
	}
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Hint is `; did you mean "a"?` (or "a", "b" or "c") for names, "" for none.
func Hint(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	list := q[len(q)-1]
	if len(q) > 1 {
		list = strings.Join(q[:len(q)-1], ", ") + " or " + list
	}
	return "; did you mean " + list + "?"
}

// UnknownTool is the JSON-RPC error for a call to name, which view does
// not hold: invalid params, naming the caller's closest tools, with the
// canonical error ({code: NOT_FOUND, message, did_you_mean}) as its data.
func UnknownTool(name string, view *catalog.Catalog) *jsonrpc.Error {
	var known []string
	for _, e := range view.Entries() {
		if e.AppOnly {
			continue // an app's, never named to a model
		}
		known = append(known, e.Wire)
		if strings.Contains(name, ".") { // a call by canonical name
			known = append(known, e.Canonical)
		}
	}
	near := Closest(name, known)
	msg := fmt.Sprintf("unknown tool %q", name) + Hint(near)
	data, _ := json.Marshal(map[string]any{"code": legate.CodeNotFound, "message": msg, "did_you_mean": near})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg, Data: data}
}
