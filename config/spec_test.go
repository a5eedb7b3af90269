package config_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upconfig"
)

func TestEveryKeyHasADescription(t *testing.T) {
	keys := config.Spec()
	if len(keys) < 80 {
		t.Fatalf("the spec has only %d keys", len(keys))
	}
	for _, k := range keys {
		if k.Description == "" {
			t.Errorf("%s has no desc tag", k.Path)
		}
	}
}

// Validate reports; it never changes the file (defaults are ApplyDefaults').
func TestValidateLeavesItsInputUnchanged(t *testing.T) {
	docs := map[string]string{
		"instance without id": "connectors:\n  - {type: http, config: {base_url: http://127.0.0.1:1}}\n",
		"sparse sections":     "upstreams:\n  - {id: a, command: [x]}\nprofiles:\n  - {name: p}\nauth: {oauth: {issuer: https://i/, jwks_url: https://i/k}, resource: https://r/mcp}\n",
		"invalid":             "connectors:\n  - {type: webhook}\napprovals: {wait: -1s, notify: nope}\n",
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			f, err := config.Decode([]byte(doc), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := config.Decode([]byte(doc), env(nil))
			_ = f.Validate()
			if !reflect.DeepEqual(f, before) {
				t.Fatalf("Validate changed the file:\n%+v\nwas\n%+v", f, before)
			}
		})
	}
}

// The defaults the runtime falls back on, for definitions that do not come
// from this file (stored upstreams, a bare Options), are the spec's.
func TestSpecDefaultsAreTheRuntimeDefaults(t *testing.T) {
	d := config.Default()
	u := &config.File{Upstreams: []upstream.Config{{ID: "a", URL: "http://x/"}}}
	if err := u.ApplyDefaults(); err != nil {
		t.Fatal(err)
	}
	up := u.Upstreams[0]
	checks := map[string]struct{ got, want any }{
		"listen":                        {d.Listen, config.DefaultListen},
		"approvals.wait":                {time.Duration(d.Approvals.Wait), policy.DefaultWait},
		"approvals.expire":              {time.Duration(d.Approvals.Expire), policy.DefaultExpire},
		"policy.defaults":               {d.Policy.Defaults, policy.DefaultActions},
		"max_result_bytes":              {d.MaxResultBytes, int64(upconfig.DefaultMaxResultBytes)},
		"upstreams[].timeout":           {time.Duration(up.Timeout), upconfig.DefaultTimeout},
		"upstreams[].max_concurrency":   {up.MaxConcurrency, upconfig.DefaultMaxConcurrency},
		"upstreams[].protocol_version":  {up.ProtocolVersion, upconfig.DefaultProtocolVersion},
		"upstreams[].session":           {up.Session, upconfig.SessionShared},
		"upstreams[].pin":               {up.Pin, upconfig.PinTOFU},
		"upstreams[].prefix":            {up.Prefixed(), true},
		"upstreams[].trust_annotations": {up.Trusted(), true},
	}
	for key, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: the spec's default is %v, the runtime's %v", key, c.got, c.want)
		}
	}
}

// Each enum of the spec lists exactly the values the code knows.
func TestSpecEnumsAreTheCodesValues(t *testing.T) {
	want := map[string][]string{
		"tool_names":                    {config.NamesSafe, config.NamesCanonical},
		"profiles[].tool_names":         {config.NamesSafe, config.NamesCanonical},
		"profiles[].discovery":          {config.DiscoveryList, config.DiscoverySearch},
		"log_level":                     {"debug", "info", "warn", "error"},
		"upstreams[].transport":         {"streamable", "sse", "stdio"},
		"upstreams[].session":           {upconfig.SessionShared, upstream.SessionPerClient},
		"upstreams[].pin":               {upconfig.PinTOFU, upconfig.PinStrict},
		"upstreams[].auth":              {"none", upconfig.AuthOAuth},
		"policy.rules[].class":          {string(legate.ClassRead), string(legate.ClassDraft), string(legate.ClassWrite), string(legate.ClassDestructive)},
		"policy.rules[].action":         {string(policy.Allow), string(policy.Deny), string(policy.Approve)},
		"policy.rules[].confirm":        {policy.ConfirmInbox, policy.ConfirmClient},
		"connectors[].credentials_mode": {config.CredentialsShared, config.CredentialsPerUser, config.CredentialsPerUserOrShared},
		"connectors[].environment":      connectors.Environments,
		"agent.model.provider":          config.AgentProviders,
	}
	seen := 0
	for _, k := range config.Spec() {
		if len(k.Enum) == 0 {
			continue
		}
		seen++
		if !reflect.DeepEqual(k.Enum, want[k.Path]) {
			t.Errorf("%s: enum %q, want %q", k.Path, k.Enum, want[k.Path])
		}
	}
	if seen != len(want) {
		t.Errorf("%d keys have an enum, want %d", seen, len(want))
	}
}
