package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/policy"
)

// fixture is one testdata file: a policy and the decisions it must give.
type fixture struct {
	Policy policy.Config `yaml:"policy"`
	Cases  []struct {
		Tool, Connector, Upstream, Principal, Tenant string
		Class                                        legate.Class
		Want                                         policy.Action
		Rule, Reason, Confirm                        string
	} `yaml:"cases"`
}

func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d fixtures", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var f fixture
			dec := yaml.NewDecoder(strings.NewReader(string(b)))
			dec.KnownFields(true)
			if err := dec.Decode(&f); err != nil {
				t.Fatal(err)
			}
			p, err := policy.New(f.Policy)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range f.Cases {
				principal := c.Principal
				if principal == "" {
					principal = "local"
				}
				s := policy.Subject{Principal: principal, Tenant: c.Tenant, Tool: c.Tool, Class: c.Class, Connector: c.Connector, Upstream: c.Upstream}
				d := p.Decide(s)
				if d.Action != c.Want {
					t.Errorf("%+v: action %s, want %s", s, d.Action, c.Want)
				}
				if c.Rule != "" && d.RuleName(c.Class) != c.Rule {
					t.Errorf("%+v: rule %s, want %s", s, d.RuleName(c.Class), c.Rule)
				}
				if c.Reason != "" && d.Reason != c.Reason {
					t.Errorf("%+v: reason %q, want %q", s, d.Reason, c.Reason)
				}
				if want := c.Confirm; want != "" && d.Confirm != want {
					t.Errorf("%+v: confirm %q, want %q", s, d.Confirm, want)
				}
			}
		})
	}
}

func TestValidationNamesTheKey(t *testing.T) {
	tests := map[string]struct {
		cfg  policy.Config
		want string
	}{
		"bad action":   {policy.Config{Rules: []policy.Rule{{Action: "maybe"}}}, "policy.rules[0].action"},
		"bad class":    {policy.Config{Rules: []policy.Rule{{Action: policy.Deny, Class: "huge"}}}, "policy.rules[0].class"},
		"bad confirm":  {policy.Config{Rules: []policy.Rule{{Action: policy.Approve, Confirm: "phone"}}}, "policy.rules[0].confirm"},
		"confirm+deny": {policy.Config{Rules: []policy.Rule{{Action: policy.Deny, Confirm: "client"}}}, "applies to action approve only"},
		"bad default":  {policy.Config{Defaults: map[legate.Class]policy.Action{"read": "yes"}}, "policy.defaults.read"},
		"bad glob":     {policy.Config{Rules: []policy.Rule{{Action: policy.Allow, Tool: "web.["}}}, "policy.rules[0].tool: bad glob"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := policy.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfirmed(t *testing.T) {
	for _, tc := range []struct {
		action  string
		content map[string]any
		want    bool
	}{
		{"accept", map[string]any{policy.ConfirmField: true}, true},
		{"accept", map[string]any{"approve": true}, true}, // the field's earlier name
		{"accept", map[string]any{policy.ConfirmField: false}, false},
		{"accept", map[string]any{policy.ConfirmField: "true"}, false},
		{"accept", nil, false},
		{"decline", map[string]any{policy.ConfirmField: true}, false},
		{"cancel", map[string]any{policy.ConfirmField: true}, false},
	} {
		if got := policy.Confirmed(tc.action, tc.content); got != tc.want {
			t.Errorf("Confirmed(%q, %v) = %v, want %v", tc.action, tc.content, got, tc.want)
		}
	}
	schema := policy.ConfirmSchema()
	if req, _ := schema["required"].([]string); len(req) != 1 || req[0] != policy.ConfirmField {
		t.Errorf("the form requires %v, want [%s]", schema["required"], policy.ConfirmField)
	}
}
