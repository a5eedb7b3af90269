package github_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	gh "github.com/legate-mcp/legate/connectors/github"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Every tool's case passes when the first request to each endpoint is
// refused: with a 5xx, with the primary rate limit (403,
// X-RateLimit-Remaining: 0) or with a 429 and Retry-After; the connector
// retries each and the case's checks hold. A tool reading three endpoints
// meets three refusals, hence max_attempts 6.
func TestEveryToolThroughFaults(t *testing.T) {
	faults := map[string]func(w http.ResponseWriter){
		"502": func(w http.ResponseWriter) { refuse(w, http.StatusBadGateway, "Server Error") },
		"403 primary rate limit": func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Limit", "5000")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Unix()))
			refuse(w, http.StatusForbidden, "API rate limit exceeded")
		},
		"429 Retry-After": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			refuse(w, http.StatusTooManyRequests, "slow down")
		},
	}
	for fault, answer := range faults {
		for name, run := range toolCases {
			t.Run(fault+"/"+name, func(t *testing.T) {
				s := newStandin(t)
				s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
					if n == 1 && op != "user" {
						answer(w)
						return true
					}
					return false
				}
				run(t, s, build(t, s, "github", "toolsets: [all]\nmax_attempts: 6"))
			})
		}
	}
}

// GitHub's own ids and URLs name issues and pull requests beside refs;
// the allow-list applies to what they name; a URL of another host is
// refused.
func TestNativeIDs(t *testing.T) {
	s := newStandin(t)
	s.seed(1)
	n := s.seedPull()
	in := build(t, s, "github", "")
	for _, ref := range []string{fmt.Sprintf("acme/api#%d", n), fmt.Sprintf("%s/acme/api/pull/%d", s.srv.URL, n), fmt.Sprintf("%s/acme/api/pull/%d/files", s.srv.URL, n)} {
		if p := decode[pullOut](t, in.do(t, "t1", "get_pull", fmt.Sprintf(`{"pull":%q}`, ref), "")); p.Number != n {
			t.Errorf("%s: got #%d", ref, p.Number)
		}
	}
	l := decode[struct{ Items []struct{ Name string } }](t, in.do(t, "t1", "list_labels", fmt.Sprintf(`{"repo":"%s/acme/api"}`, s.srv.URL), ""))
	if len(l.Items) == 0 {
		t.Error("a repository's URL lists no labels")
	}
	for args, code := range map[string]legate.Code{
		`{"issue":"https://elsewhere.example/acme/api/issues/1"}`: legate.CodeInvalidArgument,
		`{"issue":"acme/api#x"}`:                                  legate.CodeInvalidArgument,
		`{"issue":"pull://forged.sig"}`:                           legate.CodeNotFound,
		`{"issue":"acme/api#1","number":1}`:                       legate.CodeInvalidArgument,
	} {
		_, err := in.call(t, "t1", "get_issue", args, "")
		wantCode(t, err, code)
	}
	only := build(t, s, "github", "repositories: [acme/web]")
	for _, args := range []string{`{"issue":"acme/api#1"}`, fmt.Sprintf(`{"issue":"%s/acme/api/issues/1"}`, s.srv.URL)} {
		_, err := only.call(t, "t1", "get_issue", args, "")
		wantCode(t, err, legate.CodePermissionDenied)
	}
}

// The allow-list limits searches with repo: qualifiers, so that results
// come from the allowed repositories only.
func TestSearchStaysWithinTheRepositories(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "github", "repositories: [acme/api, acme/web]")
	l := decode[struct{ Items []struct{ Repo string } }](t, in.do(t, "t1", "search_code", `{"query":"timeout","limit":100}`, ""))
	for _, h := range l.Items {
		if h.Repo != "acme/api" && h.Repo != "acme/web" {
			t.Fatalf("a hit in %s", h.Repo)
		}
	}
	if len(l.Items) != 8 {
		t.Fatalf("%d hits; want the 7 of acme/api and the one of acme/web", len(l.Items))
	}
}

func names(tools []connectors.Tool) string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

// The config's toolsets choose the tools offered; read_only leaves the
// reads; an unknown toolset is a config error naming the known ones.
func TestToolsets(t *testing.T) {
	s := newStandin(t)
	def := build(t, s, "github", "").c.Tools()
	all := build(t, s, "github", "toolsets: [all]").c.Tools()
	if strings.Contains(names(def), "workflow") || !strings.Contains(names(def), "merge_pull") || len(all) != len(toolCases) {
		t.Fatalf("default %s; all %d tools", names(def), len(all))
	}
	ro := build(t, s, "github", "toolsets: [default, actions]\nread_only: true").c.Tools()
	for _, tool := range ro {
		if tool.Class != legate.ClassRead {
			t.Errorf("read_only offers %s (%s)", tool.Name, tool.Class)
		}
	}
	if !strings.Contains(names(ro), "get_workflow_run") {
		t.Errorf("read_only with actions: %s", names(ro))
	}
	for _, tool := range all {
		if tool.Toolset == "" {
			t.Errorf("%s has no toolset", tool.Name)
		}
		if tool.Class != legate.ClassRead && !strings.HasSuffix(tool.Description, saas.OnceNote) {
			t.Errorf("write %s: its description does not end with saas.OnceNote", tool.Name)
		}
	}
	c := buildErr(t, fmt.Sprintf("base_url: %s/\nallow_private_networks: true\ntoolsets: [default, wiki]", s.srv.URL))
	if c == nil || !strings.Contains(c.Error(), "wiki") || !strings.Contains(c.Error(), "pull_requests") {
		t.Fatalf("unknown toolset: %v", c)
	}
}

// buildErr is the error of building a github instance from config.
func buildErr(t *testing.T, config string) error {
	t.Helper()
	ct, _ := connectors.Lookup("github")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config), &node); err != nil {
		t.Fatal(err)
	}
	c, err := connectors.Build(ct, "github", &node, "config")
	if err == nil {
		err = c.Validate()
	}
	return err
}

// The toolsets field's desc is connectors.ToolsetsDesc and the type's
// toolset names, as every connector with toolsets words it.
func TestToolsetsDesc(t *testing.T) {
	f, _ := reflect.TypeFor[gh.Config]().FieldByName("Toolsets")
	if want := connectors.ToolsetsDesc + ": " + connectors.ToolsetNames(gh.Toolsets); f.Tag.Get("desc") != want {
		t.Fatalf("desc %q\nwant %q", f.Tag.Get("desc"), want)
	}
}
