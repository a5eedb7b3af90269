package policy_test

import (
	"path"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/policy"
)

// FuzzGlob checks that a rule's globs match as the documented syntax says
// (path.Match's grammar, read by refMatch below): a tool rule matches
// exactly the names the reference matches, an upstream rule never matches
// a native tool, and a pattern that validation refuses never builds a
// policy.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{"mcp.fs.read_*", "mcp.fs.read_file"},
		{"mcp.fs.read_*", "mcp.fs.write_file"},
		{"*", "slack.post_message"},
		{"*", "a/b"},
		{"slack.?ost_*", "slack.post_message"},
		{"[a-c]*.x", "b.x"},
		{"[^a-c]*.x", "/.x"},
		{`\*.x`, "*.x"},
		{"mcp.*.*", "mcp.up.echo"},
		{"a*b*c*d*e*f", "aabbccddeeff"},
		{"[", "x"},
		{"a[]", "a]"},
		{"*?", "\xff"},
		{"日本*", "日本語"},
		{"[日-語]", "本"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if pattern == "" {
			return // an empty field matches anything, by design
		}
		_, badErr := path.Match(pattern, "")
		p, err := policy.New(policy.Config{Rules: []policy.Rule{
			{Tool: pattern, Action: policy.Deny},
			{Upstream: pattern, Action: policy.Approve},
		}})
		if badErr != nil {
			if err == nil {
				t.Fatalf("pattern %q: path.Match says %v, but the policy was built", pattern, badErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("valid pattern %q refused: %v", pattern, err)
		}
		want := refMatch(pattern, name)
		got := p.Decide(policy.Subject{Tool: name, Class: legate.ClassRead, Connector: "c"})
		if (got.Action == policy.Deny) != want {
			t.Fatalf("tool %q against %q: decision %s, reference match %v", name, pattern, got.Action, want)
		}
		if !want && got.Rule != -1 {
			t.Fatalf("a native tool matched the upstream rule: %+v", got)
		}
		got = p.Decide(policy.Subject{Tool: "zz", Class: legate.ClassRead, Upstream: name})
		// (Unless the tool rule, first, matches the tool "zz".)
		if !refMatch(pattern, "zz") && (got.Action == policy.Approve) != want {
			t.Fatalf("upstream %q against %q: decision %s, reference match %v", name, pattern, got.Action, want)
		}
	})
}

// Patterns with many stars are matched in time linear in their size and
// the name's, never by exponential backtracking.
func TestGlobPathologicalPatternsAreFast(t *testing.T) {
	name := strings.Repeat("a", 20000)
	for _, pattern := range []string{
		strings.Repeat("*a", 200) + "b",
		strings.Repeat("*", 5000) + "b",
		strings.Repeat("a*", 300) + "?b",
		strings.Repeat("*[a-z]", 100) + "[^a]",
	} {
		p, err := policy.New(policy.Config{Rules: []policy.Rule{{Tool: pattern, Action: policy.Deny}}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d := p.Decide(policy.Subject{Tool: name, Class: legate.ClassRead})
		// Milliseconds are expected; seconds would mean backtracking.
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%.20s…: %s", pattern, el)
		}
		if d.Action == policy.Deny {
			t.Errorf("%.20s… matched a name without its last character", pattern)
		}
	}
}

// refMatch is a reference for path.Match on valid patterns, written from
// its documented grammar rather than its code: the pattern is read into
// terms, then matched by dynamic programming over (term, byte offset), so
// it needs no backtracking and cannot be fooled by a greedy choice.
func refMatch(pattern, name string) bool {
	terms := parseTerms(pattern)
	// reach[j]: the terms read so far can match name[:j].
	reach := make([]bool, len(name)+1)
	reach[0] = true
	for _, tm := range terms {
		next := make([]bool, len(name)+1)
		if tm.star {
			// Any run of non-/ bytes: one sweep, carrying a reached start
			// until a '/'.
			carry := false
			for k := 0; k <= len(name); k++ {
				carry = carry || reach[k]
				next[k] = carry
				if k < len(name) && name[k] == '/' {
					carry = false
				}
			}
			reach = next
			continue
		}
		for j := 0; j < len(name); j++ {
			if k, ok := tm.one(name, j); reach[j] && ok {
				next[k] = true
			}
		}
		reach = next
	}
	return reach[len(name)]
}

// term is one element of a pattern: a star, or a term matching one
// character (a literal byte, '?', or a class).
type term struct {
	star    bool
	lit     byte
	any     bool // '?'
	class   [][2]rune
	isClass bool
	negated bool
}

// one matches the term at name[j:], returning the offset after it.
func (tm term) one(name string, j int) (int, bool) {
	if j == len(name) {
		return 0, false
	}
	switch {
	case tm.any:
		_, n := utf8.DecodeRuneInString(name[j:])
		return j + n, name[j] != '/'
	case tm.isClass:
		r, n := utf8.DecodeRuneInString(name[j:])
		in := false
		for _, rg := range tm.class {
			in = in || rg[0] <= r && r <= rg[1]
		}
		return j + n, in != tm.negated
	}
	return j + 1, name[j] == tm.lit
}

// parseTerms reads a pattern path.Match accepts.
func parseTerms(p string) []term {
	var out []term
	for i := 0; i < len(p); {
		switch p[i] {
		case '*':
			out = append(out, term{star: true})
			i++
		case '?':
			out = append(out, term{any: true})
			i++
		case '[':
			tm := term{isClass: true}
			i++
			if p[i] == '^' {
				tm.negated = true
				i++
			}
			for first := true; first || p[i] != ']'; first = false {
				var lo, hi rune
				lo, i = classChar(p, i)
				hi = lo
				if p[i] == '-' {
					hi, i = classChar(p, i+1)
				}
				tm.class = append(tm.class, [2]rune{lo, hi})
			}
			i++ // ']'
			out = append(out, tm)
		case '\\':
			out = append(out, term{lit: p[i+1]})
			i += 2
		default:
			out = append(out, term{lit: p[i]})
			i++
		}
	}
	return out
}

// classChar reads a possibly escaped character of a class at p[i:].
func classChar(p string, i int) (rune, int) {
	if p[i] == '\\' {
		i++
	}
	r, n := utf8.DecodeRuneInString(p[i:])
	return r, i + n
}

// Validation reports bad globs and defaults in the order of the rule's
// fields and of the classes, the same on every run.
func TestValidationErrorsInStableOrder(t *testing.T) {
	cfg := policy.Config{
		Defaults: map[legate.Class]policy.Action{"zz": policy.Allow, "aa": policy.Allow, legate.ClassWrite: "maybe"},
		Rules:    []policy.Rule{{Principal: "[", Tenant: "[", Upstream: "[", Tool: "[", Action: policy.Allow}},
	}
	want := strings.Join([]string{
		"policy.defaults.aa: unknown class (read, draft, write, destructive)",
		`policy.defaults.write: action must be allow, deny or approve, not "maybe"`,
		"policy.defaults.zz: unknown class (read, draft, write, destructive)",
		`policy.rules[0].principal: bad glob "["`,
		`policy.rules[0].tenant: bad glob "["`,
		`policy.rules[0].upstream: bad glob "["`,
		`policy.rules[0].tool: bad glob "["`,
	}, "\n")
	for range 20 {
		_, err := policy.New(cfg)
		if err == nil || err.Error() != want {
			t.Fatalf("got\n%v\nwant\n%s", err, want)
		}
	}
}
