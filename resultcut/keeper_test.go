package resultcut_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/resultcut"
)

func keeper(def string) *resultcut.Keeper {
	profs := map[string]config.Profile{
		"small":  {Name: "small", ResultBudgetTokens: 1000},
		"tiny":   {Name: "tiny", ResultBudgetTokens: 300},
		"nobudg": {Name: "nobudg"},
	}
	d := &profiles.Discovery{Principal: "local", Default: func() string { return def },
		Profile: func(name string) (config.Profile, bool) { p, ok := profs[name]; return p, ok || name == "" }}
	return resultcut.New(nil, d, config.Results{}, nil)
}

func TestBudget(t *testing.T) {
	k := keeper("")
	for name, c := range map[string]struct {
		p       *auth.Principal
		perCall int
		want    int
	}{
		"no profile, no call budget":      {nil, 0, 0},
		"no profile, a call budget":       {nil, 500, 500},
		"a profile without budget":        {&auth.Principal{Name: "a", Profile: "nobudg"}, 0, 0},
		"its budget":                      {&auth.Principal{Name: "a", Profile: "small"}, 0, 1000},
		"a call lowers it":                {&auth.Principal{Name: "a", Profile: "small"}, 400, 400},
		"a call cannot raise it":          {&auth.Principal{Name: "a", Profile: "small"}, 4000, 1000},
		"narrowed: the lower of both":     {&auth.Principal{Name: "a", Profile: "small", Narrow: "tiny"}, 0, 300},
		"narrowed to a profile without":   {&auth.Principal{Name: "a", Profile: "small", Narrow: "nobudg"}, 0, 1000},
		"narrowed, and a call lowers too": {&auth.Principal{Name: "a", Profile: "small", Narrow: "tiny"}, 280, 280},
	} {
		if got := k.Budget(c.p, c.perCall); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
	// The top-level profile is the budget of callers who name none.
	if got := keeper("tiny").Budget(nil, 0); got != 300 {
		t.Errorf("the default profile's budget: %d, want 300", got)
	}
}

func TestDeclines(t *testing.T) {
	k := keeper("")
	for name, c := range map[string]struct {
		p     *auth.Principal
		asked bool
		want  bool
	}{
		"nothing":                 {nil, false, false},
		"a profile without":       {&auth.Principal{Name: "a", Profile: "nobudg"}, false, false},
		"a call budget":           {nil, true, true},
		"a profile with a budget": {&auth.Principal{Name: "a", Profile: "small"}, false, true},
	} {
		if got := k.Declines(c.p, c.asked); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}

func TestPerCall(t *testing.T) {
	for name, c := range map[string]struct {
		v    any
		want int
	}{
		"absent":   {nil, 0},
		"a number": {float64(700), 700},
		"decoded":  {json.Number("42"), 42},
		"fraction": {1.5, 0},
		"negative": {float64(-3), 0},
		"a string": {"700", 0},
		"huge":     {1e300, 0},
	} {
		meta := mcp.Meta{}
		if c.v != nil {
			meta[resultcut.MetaKey] = c.v
		}
		if got := resultcut.PerCall(meta); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
}
