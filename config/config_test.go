package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	_ "github.com/legate-mcp/legate/connectors/all"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExampleLoadsAndValidates(t *testing.T) {
	f, err := config.Load("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Connectors) != 6 || f.Connectors[0].ID != "web" || f.Connectors[1].Type != "webhook" || f.Connectors[2].Tenant != "acme" ||
		f.Connectors[3].PerUserCredential() != "user_token" || f.Connectors[3].OAuthApp().TokenURL == "" ||
		f.Connectors[4].PerUserCredential() != "oauth_access_token" || f.Connectors[4].OAuthApp().TokenURL != "https://oauth2.googleapis.com/token" ||
		f.Connectors[5].PerUserCredential() != "token" || f.Connectors[5].OAuthApp() != nil {
		t.Fatalf("unexpected connectors: %+v", f.Connectors)
	}
	if len(f.Upstreams) != 5 || f.Upstreams[1].Session != "per_client" || f.Upstreams[2].Prefixed() || f.Upstreams[3].Tenant != "acme" ||
		!f.Upstreams[4].OAuthProtected() || f.Upstreams[4].OAuth.ClientID != "legate-notes" {
		t.Fatalf("unexpected upstreams: %+v", f.Upstreams)
	}
}

func TestErrorsNameTheKeyPath(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want []string
	}{
		"unknown top-level key": {"listen: 127.0.0.1:1\nlisten_addr: x\n", []string{"listen_addr: unknown key"}},
		"typo suggests":         {"tool_name: safe\n", []string{`tool_name: unknown key (did you mean "tool_names"?)`}},
		"bad enum":              {"tool_names: fancy\n", []string{"tool_names: must be"}},
		"bad listen":            {"listen: nope\n", []string{"listen: want host:port"}},
		"listen port too large": {"listen: 127.0.0.1:70000\n", []string{`listen: port "70000" is not a port number`}},
		"bad metrics listen":    {"metrics: {listen: \"9464\"}\n", []string{"metrics.listen: want host:port"}},
		"bad duration":          {"call_timeout: soon\n", []string{"call_timeout: invalid duration"}},
		"wrong kind":            {"allowed_hosts: {a: b}\n", []string{"allowed_hosts: must be a list"}},
		"unknown connector key": {"connectors:\n  - type: http\n    confg: {}\n", []string{"connectors[0].confg: unknown key"}},
		"unknown type": {"connectors:\n  - type: nosuch\n",
			[]string{`connectors[0].type: unknown connector type "nosuch"`, "http", "webhook"}},
		"bad id":       {"connectors:\n  - id: Web_1\n    type: http\n", []string{`connectors[0].id: "Web_1" must match`}},
		"reserved id":  {"connectors:\n  - id: mcp\n    type: http\n", []string{`connectors[0].id: "mcp" is reserved`}},
		"duplicate id": {"connectors:\n  - type: http\n  - id: http\n    type: http\n", []string{`connectors[1].id: duplicate id "http" (also connectors[0])`}},
		"unknown credential": {"connectors:\n  - type: webhook\n    credentials:\n      secret: {env: X}\n",
			[]string{`connectors[0].credentials.secret: type "webhook" takes no credential "secret"`}},
		"empty credential ref": {"connectors:\n  - type: webhook\n    credentials:\n      signing_secret: {}\n",
			[]string{"connectors[0].credentials.signing_secret: must name exactly one source"}},
		"unknown ref kind": {"connectors:\n  - type: webhook\n    credentials:\n      signing_secret: {value: hunter2}\n",
			[]string{"connectors[0].credentials.signing_secret.value: unknown key"}},
		"unset env var":           {"listen: 127.0.0.1:${PORT}\n", []string{"listen: environment variable PORT is not set"}},
		"all errors at once":      {"listen: nope\ntool_names: fancy\n", []string{"listen:", "tool_names:"}},
		"upstream id with a dot":  {"upstreams:\n  - id: a.b\n    url: http://127.0.0.1:1/mcp\n", []string{`upstreams[0].id: "a.b" must match`}},
		"upstream without source": {"upstreams:\n  - id: a\n", []string{"upstreams[0].url: an upstream needs a url or a command"}},
		"upstream both sources":   {"upstreams:\n  - id: a\n    url: http://x/\n    command: [x]\n", []string{"upstreams[0].command: give a url or a command"}},
		"upstream bad session":    {"upstreams:\n  - id: a\n    command: [x]\n    session: each\n", []string{"upstreams[0].session: must be shared or per_client"}},
		"upstream unknown key":    {"upstreams:\n  - id: a\n    command: [x]\n    header: {}\n", []string{"upstreams[0].header: unknown key"}},
		"negative http limits":    {"http: {read_timeout: -1s, max_body_bytes: -1}\n", []string{"http.read_timeout: must not be negative", "http.max_body_bytes: must not be negative"}},
		"upstream negative refresh_interval": {"upstreams:\n  - {id: a, command: [x], refresh_interval: -1s}\n",
			[]string{"upstreams[0].refresh_interval: must not be negative"}},
		"upstream negative pool_size": {"upstreams:\n  - {id: a, command: [x], pool_size: -1}\n",
			[]string{"upstreams[0].pool_size: must not be negative"}},
		"upstream bad tool glob": {"upstreams:\n  - {id: a, command: [x], tools: {exclude: [ok, \"[\"]}}\n",
			[]string{`upstreams[0].tools.exclude[1]: bad glob "["`}},
		"approvals negative wait":   {"approvals: {wait: -1s}\n", []string{"approvals.wait: must not be negative"}},
		"approvals negative expire": {"approvals: {expire: -1h}\n", []string{"approvals.expire: must not be negative"}},
		"approvals notify unknown":  {"approvals: {notify: nope}\n", []string{`approvals.notify: names no tool and no connector instance of this file: "nope"`}},
		"profile without name":      {"profiles:\n  - {include: [a]}\n", []string{"profiles[0].name: is required"}},
		"profile twice": {"profiles:\n  - {name: p}\n  - {name: p}\n",
			[]string{`profiles[1].name: duplicate name "p" (also profiles[0])`}},
		"duplicate key":      {"listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n", []string{"listen: duplicate key (first at line 1)"}},
		"oauth without keys": {"auth: {resource: https://r/mcp, oauth: {issuer: https://i/}}\n", []string{"auth.oauth.jwks_url: is required"}},
		"profile bad glob": {"profiles:\n  - {name: p, include: [\"[\"]}\n",
			[]string{`profiles[0].include[0]: bad glob "["`}},
		"profile unknown": {"profile: nope\nprofiles:\n  - {name: p}\n",
			[]string{`profile: no profile is named "nope"`}},
		"profile for unknown": {"profiles:\n  - {name: p, for: [p, nope]}\n",
			[]string{`profiles[0].for[1]: no profile is named "nope"`}},
		"selection name and all": {"profiles:\n  - {name: p, connectors: [{name: a, all: true}]}\n",
			[]string{`profiles[0].connectors[0]: give either name or all: true`}},
		"selection max without all": {"profiles:\n  - {name: p, connectors: [{name: a, max: 3}]}\n",
			[]string{`profiles[0].connectors[0]: exclude and max go with all: true`}},
		"credentials_name with all": {"profiles:\n  - {name: p, connectors: [{all: true, credentials_name: team}]}\n",
			[]string{`profiles[0].connectors[0].credentials_name: goes with name`}},
		"credentials_name of no set": {"connectors:\n  - {type: webhook, credential_sets: {team: {signing_secret: {env: S}}}}\nprofiles:\n  - {name: p, connectors: [{name: webhook, credentials_name: ops}]}\n",
			[]string{`profiles[0].connectors[0].credentials_name: connector "webhook" has no credential set "ops" (its credential_sets: team)`}},
		"credentials_name of an upstream": {"upstreams:\n  - {id: a, command: [x]}\nprofiles:\n  - {name: p, connectors: [{name: a, credentials_name: team}]}\n",
			[]string{`profiles[0].connectors[0].credentials_name: "a" is an upstream`}},
		"credential set of unknown credential": {"connectors:\n  - {type: webhook, credential_sets: {team: {secret: {env: S}}}}\n",
			[]string{`connectors[0].credential_sets.team.secret: type "webhook" takes no credential "secret"`}},
		"credential set with a bad name": {"connectors:\n  - {type: webhook, credential_sets: {Team: {signing_secret: {env: S}}}}\n",
			[]string{`connectors[0].credential_sets.Team: set name "Team" must match`}},
		"credential set empty ref": {"connectors:\n  - {type: webhook, credential_sets: {team: {signing_secret: {}}}}\n",
			[]string{"connectors[0].credential_sets.team.signing_secret: must name exactly one source"}},
		"allow_mcp_ui not a bool": {"profiles:\n  - {name: p, connectors: [{name: a, allow_mcp_ui: maybe}]}\n",
			[]string{`profiles[0].connectors[0].allow_mcp_ui`}},
		"discovery unknown": {"profiles:\n  - {name: p, discovery: lazy}\n",
			[]string{`profiles[0].discovery`}},
		"agent without its url":                       {"agent: {model: {provider: openai-compatible, model: m}}\n", []string{"agent.model.url: is required for provider openai-compatible"}},
		"agent without a token":                       {"agent: {model: {provider: anthropic, model: m}}\n", []string{"agent.model.access_token: is required for provider anthropic"}},
		"agent bad temperature":                       {"agent: {model: {provider: ollama, model: m, temperature: 7}}\n", []string{"agent.model.temperature: 7 is not between 0 and 2"}},
		"agent unknown profile":                       {"agent: {profile: nope}\n", []string{`agent.profile: no profile is named "nope"`}},
		"agent unknown provider":                      {"agent: {model: {provider: skynet, model: m}}\n", []string{"agent.model.provider: must be"}},
		"oauth upstream over stdio":                   {"upstreams:\n  - {id: a, command: [x], auth: oauth}\n", []string{`upstreams[0].auth: oauth applies to url upstreams only`}},
		"oauth upstream per client":                   {"upstreams:\n  - {id: a, url: 'http://x/', auth: oauth, session: per_client}\n", []string{`upstreams[0].session: an upstream with auth: oauth has a session per principal: per_client does not apply`}},
		"oauth upstream with an authorization header": {"upstreams:\n  - {id: a, url: 'http://x/', auth: oauth, header_env: {authorization: T}}\n", []string{`upstreams[0].header_env.authorization: with auth: oauth, the Authorization header is each caller's token`}},
		"oauth client without auth":                   {"upstreams:\n  - {id: a, url: 'http://x/', oauth: {client_id: c}, list_before_connect: true}\n", []string{`upstreams[0].oauth: applies with auth: oauth only`, `upstreams[0].list_before_connect: applies with auth: oauth only`}},
		"duplicate upstream":                          {"upstreams:\n  - {id: a, command: [x]}\n  - {id: a, command: [y]}\n", []string{`upstreams[1].id: duplicate id "a" (also upstreams[0])`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml), env(nil))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEnvExpansion(t *testing.T) {
	f, err := config.Parse([]byte("listen: ${HOST}:${PORT}\ncall_timeout: ${T}\nallowed_origins: [\"$$literal\"]\n"),
		env(map[string]string{"HOST": "127.0.0.1", "PORT": "9999", "T": "5s"}))
	if err != nil {
		t.Fatal(err)
	}
	if f.Listen != "127.0.0.1:9999" || time.Duration(f.CallTimeout) != 5*time.Second || f.AllowedOrigins[0] != "$literal" {
		t.Fatalf("got %+v", f)
	}
}

func TestEmptyConfigIsValid(t *testing.T) {
	for _, doc := range []string{"", "# nothing\n", "{}\n"} {
		if _, err := config.Parse([]byte(doc), env(nil)); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

// The same file gives the same errors in the same order every run, as
// people compare them between runs.
func TestErrorsAreInAStableOrder(t *testing.T) {
	doc := []byte(`profiles:
  - {name: p, include: ["[a"], exclude: ["[b"]}
upstreams:
  - id: u
    url: http://127.0.0.1:1/mcp
    header_env: {A: "", B: "", C: "", D: ""}
    tools: {include: ["[c"], exclude: ["[d"]}
`)
	_, first := config.Parse(doc, env(nil))
	if first == nil {
		t.Fatal("accepted")
	}
	for range 20 {
		if _, err := config.Parse(doc, env(nil)); err.Error() != first.Error() {
			t.Fatalf("errors differ between runs:\n%v\n%v", first, err)
		}
	}
}

// Load reports every problem of a file in one go, in the order of its
// lines, each with the file and line: an unknown top-level key hides
// neither an unknown key further down (in a connector's own config too)
// nor a value that fails validation, and a value that cannot be decoded
// is not reported a second time by validation.
func TestLoadReportsEveryErrorWithItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	doc := `listn: 127.0.0.1:9000
log_level: loud
http:
  read_timout: 5s
connectors:
  - type: webhook
    config:
      url: https://hooks.example.com/in
      max_atempts: 3
audit:
  retention: forever
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(path)
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		path + `:1: listn: unknown key (did you mean "listen"?)`,
		path + `:2: log_level: must be debug, info, warn or error, not "loud"`,
		path + `:4: http.read_timout: unknown key (did you mean "read_timeout"?)`,
		path + `:9: connectors[0].config.max_atempts: unknown key (did you mean "max_attempts"?)`,
		path + `:11: audit.retention: invalid duration "forever" (use e.g. 30s, 2m)`,
	}
	if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", err, strings.Join(want, "\n"))
	}
	var ce *config.Error
	if !errors.As(err, &ce) || ce.File != path || ce.Line != 1 {
		t.Fatalf("not a *config.Error of the file and line: %#v", ce)
	}
}

// A reload applies budgets (the only change between these two files that
// waits for a restart is listen), and what the loader keeps of the
// environment is no key at all.
func TestRestartKeysOfABudgetsChange(t *testing.T) {
	env := func(v string) func(string) (string, bool) { return func(string) (string, bool) { return v, true } }
	a, err := config.Parse([]byte("listen: 127.0.0.1:8080\nconnectors:\n  - {id: w, type: webhook, config: {url: \"${U}\"}}\n"), env("https://a.example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := config.Parse([]byte("listen: 127.0.0.1:9090\nconnectors:\n  - {id: w, type: webhook, config: {url: \"${U}\"}}\nbudgets:\n  per_principal:\n    calls: {limit: 10}\n"), env("https://b.example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	if got := config.RestartKeys(a, b); !slices.Equal(got, []string{"listen"}) {
		t.Fatalf("restart keys %v, want [listen]", got)
	}
}
