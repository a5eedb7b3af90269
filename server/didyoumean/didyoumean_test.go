package didyoumean_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/server/didyoumean"
)

func TestClosest(t *testing.T) {
	tools := []string{"github__get_issue", "github__get_issues", "github__create_issue", "slack__post_message", "legate__approval_status"}
	for name, c := range map[string]struct {
		typed string
		want  []string
	}{
		"one letter missing":      {"github__get_isue", []string{"github__get_issue", "github__get_issues"}},
		"case":                    {"GitHub__Get_Issue", []string{"github__get_issue", "github__get_issues"}},
		"a prefix":                {"slack__post", []string{"slack__post_message"}},
		"the tool without its id": {"post_mesage", []string{"slack__post_message"}},
		"canonical form":          {"slack.post_mesage", []string{"slack__post_message"}},
		"nothing near":            {"weather__forecast", nil},
		"empty":                   {"", nil},
	} {
		if got := didyoumean.Closest(c.typed, tools); !slices.Equal(got, c.want) {
			t.Errorf("%s: Closest(%q) = %q, want %q", name, c.typed, got, c.want)
		}
	}
	many := []string{"a__x1", "a__x2", "a__x3", "a__x4", "a__x5"}
	if got := didyoumean.Closest("a__x", many); len(got) != didyoumean.Max {
		t.Errorf("Closest names %d of five close names, want %d: %q", len(got), didyoumean.Max, got)
	}
}

func TestHint(t *testing.T) {
	for names, want := range map[string]string{
		"":      "",
		"a":     `; did you mean "a"?`,
		"a b":   `; did you mean "a" or "b"?`,
		"a b c": `; did you mean "a", "b" or "c"?`,
	} {
		list := strings.Fields(names)
		if got := didyoumean.Hint(list); got != want {
			t.Errorf("Hint(%q) = %q, want %q", list, got, want)
		}
	}
}
