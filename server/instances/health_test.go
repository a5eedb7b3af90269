package instances_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/github"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/vault"
)

// provider stands in for GitHub's REST API: GET /user answers with the
// token's scopes, GET of issue 1 answers as status says.
type provider struct {
	mu      sync.Mutex
	status  int // of the issue's GET
	hits    int // requests for the issue
	version string
	srv     *httptest.Server
}

func newProvider(t *testing.T) *provider {
	p := &provider{status: http.StatusOK}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/user", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.version = r.Header.Get("X-GitHub-Api-Version")
		p.mu.Unlock()
		w.Header().Set("X-OAuth-Scopes", "repo, read:org")
		w.Write([]byte(`{"login":"octo","id":1}`))
	})
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/1", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits++
		status := p.status
		p.mu.Unlock()
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "30")
		}
		w.WriteHeader(status)
		if status == http.StatusOK {
			w.Write([]byte(`{"number":1,"title":"t","state":"open","html_url":"http://x/acme/api/issues/1","user":{"login":"octo"}}`))
			return
		}
		w.Write([]byte(`{"message":"no"}`))
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) set(status int) {
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
}

func (p *provider) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits
}

// githubSet builds one github instance against p with the breaker b.
func githubSet(t *testing.T, p *provider, b instances.Breaker) (*instances.Instance, *instances.Tool) {
	t.Helper()
	t.Setenv("HEALTH_TEST_GH_TOKEN", "ghp_test")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte("base_url: "+p.srv.URL+"/\nallow_private_networks: true\nmax_attempts: 1\ntoolsets: [default, actions]"), &node); err != nil {
		t.Fatal(err)
	}
	def := sources.InstanceDef{ID: "gh", Type: "github", Config: node.Content[0], Path: "connectors[0]",
		Credentials: map[string]vault.Ref{"token": {Env: "HEALTH_TEST_GH_TOKEN"}}}
	set, err := instances.Build([]sources.InstanceDef{def}, nil, instances.Options{Resolver: &vault.Resolver{}, Breaker: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close(nil) })
	for _, e := range set.Entries() {
		if e.Canonical == "gh.get_issue" {
			return set[0], e.Target.(*instances.Tool)
		}
	}
	t.Fatal("no gh.get_issue")
	return nil, nil
}

func call(in *instances.Instance, tool *instances.Tool, args string) error {
	_, err := tool.Run(context.Background(), &connectors.Call{Tool: tool.Tool.Name, Args: json.RawMessage(args), Credentials: in.Creds, OperationID: "op"})
	return err
}

const issue1 = `{"repo":"acme/api","number":1}`

// Provider failures in a row open the circuit; while it is open a call
// fails at once with UPSTREAM_UNAVAILABLE, saying when it retries, and
// the provider sees none; once the cool-down has passed one trial call is
// let through, and its success closes the circuit.
func TestCircuitOpensOnProviderFailuresAndClosesAfterCooldown(t *testing.T) {
	p := newProvider(t)
	in, tool := githubSet(t, p, instances.Breaker{Failures: 3, Cooldown: 50 * time.Millisecond})
	p.set(http.StatusBadGateway)
	for i := range 3 {
		if err := call(in, tool, issue1); legate.CodeOf(err) != legate.CodeTransient {
			t.Fatalf("failure %d: %v, want TRANSIENT", i+1, err)
		}
	}
	if s := in.Health.State(); s.Circuit != "open" || s.LastFailure == "" || s.RetryAt.IsZero() {
		t.Fatalf("after 3 provider failures: %+v", s)
	}
	hits := p.count()
	err := call(in, tool, issue1)
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != legate.CodeUpstreamUnavailable || !contains(le.Message, "circuit is open", "let through again at") || le.Details["retry_at"] == nil {
		t.Fatalf("a call while open: %v", err)
	}
	if p.count() != hits {
		t.Fatalf("the provider was called while the circuit was open")
	}
	p.set(http.StatusOK)
	for in.Health.State().Circuit == "open" { // the cool-down, and no more
		time.Sleep(5 * time.Millisecond)
	}
	if err := call(in, tool, issue1); err != nil {
		t.Fatalf("the trial call: %v", err)
	}
	if s := in.Health.State(); s.Circuit != "closed" || s.Failures != 0 {
		t.Fatalf("after the trial call's success: %+v", s)
	}
}

// A provider's answers (not found, permission, a rate limit with its
// Retry-After), the caller's invalid
// arguments and its own cancellation are not the provider failing: the
// circuit stays closed and counts none of them.
func TestCircuitIgnoresAnswersAndCallersMistakes(t *testing.T) {
	p := newProvider(t)
	in, tool := githubSet(t, p, instances.Breaker{Failures: 2, Cooldown: time.Hour})
	for name, tc := range map[string]struct {
		status int
		args   string
		code   legate.Code
	}{
		"not found":         {http.StatusNotFound, issue1, legate.CodeNotFound},
		"permission":        {http.StatusForbidden, issue1, legate.CodePermissionDenied},
		"rate limited":      {http.StatusTooManyRequests, issue1, legate.CodeRateLimited},
		"invalid arguments": {http.StatusOK, `{"repo": 7}`, legate.CodeInvalidArgument},
	} {
		p.set(tc.status)
		for range 3 {
			if err := call(in, tool, tc.args); legate.CodeOf(err) != tc.code {
				t.Fatalf("%s: %v, want %s", name, err, tc.code)
			}
		}
		if s := in.Health.State(); s.Circuit != "closed" || s.Failures != 0 {
			t.Fatalf("%s counted against the provider: %+v", name, s)
		}
	}
	p.set(http.StatusBadGateway)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 3 {
		tool.Run(ctx, &connectors.Call{Tool: tool.Tool.Name, Args: json.RawMessage(issue1), Credentials: in.Creds, OperationID: "op"})
	}
	if s := in.Health.State(); s.Circuit != "closed" || s.Failures != 0 {
		t.Fatalf("the caller's cancellations counted against the provider: %+v", s)
	}
}

// A connection test keeps what it found: the scopes the token has, those
// of the instance's needs it lacks; the connector says what it speaks,
// the API version go-github sends.
func TestTestRecordsTheCredentialsScopes(t *testing.T) {
	p := newProvider(t)
	in, _ := githubSet(t, p, instances.Breaker{})
	res := instances.Set{in}.Test(context.Background(), "gh")
	if err := res["gh"]; err != nil {
		t.Fatal(err)
	}
	tested := in.Health.State().Test
	if tested == nil || !tested.OK || !tested.Facts.ScopesKnown {
		t.Fatalf("test record: %+v", tested)
	}
	if got := tested.Facts.Scopes; len(got) != 2 || got[0] != "read:org" || got[1] != "repo" {
		t.Errorf("scopes has: %v", got)
	}
	if got := tested.Facts.Missing; len(got) != 1 || got[0] != "workflow" {
		t.Errorf("scopes missing: %v", got)
	}
	d := in.Conn.(connectors.Describer).Describe()
	if d.APIVersion != ghcore.APIVersion || p.version != ghcore.APIVersion {
		t.Errorf("API version: described %q, sent %q, want %q", d.APIVersion, p.version, ghcore.APIVersion)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// A reload that keeps an instance keeps its circuit and last test; one
// that changes its definition starts it afresh.
func TestReloadKeepsTheHealthOfAnUnchangedInstance(t *testing.T) {
	p := newProvider(t)
	in, _ := githubSet(t, p, instances.Breaker{})
	opts := instances.Options{Resolver: &vault.Resolver{}}
	kept, err := instances.Build([]sources.InstanceDef{in.Def}, instances.Set{in}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if kept[0].Health != in.Health {
		t.Errorf("an unchanged instance lost its health on a reload")
	}
	changed := in.Def
	changed.Tenant = "acme"
	fresh, err := instances.Build([]sources.InstanceDef{changed}, instances.Set{in}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close(instances.Set{in})
	if fresh[0].Health == in.Health || fresh[0].Health == nil {
		t.Errorf("a changed instance kept the old health")
	}
}
