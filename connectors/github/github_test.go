package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	_ "github.com/legate-mcp/legate/connectors/github"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{
		Type:        "github",
		Config:      "base_url: http://127.0.0.1:9/\nallow_private_networks: true",
		Credentials: map[string]string{"token": token},
	})
}

func TestSampleBuilds(t *testing.T) {
	b, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Build(t, "github", "github", string(b))
}

type instance struct {
	c   connectors.Connector
	key []byte
	ops connectors.Operations
}

// build builds an instance on s: a new connector, so a new client per
// test case (go-github remembers rate limits per client).
func build(t *testing.T, s *standin, id, extra string) *instance {
	t.Helper()
	cfg := fmt.Sprintf("base_url: %s/\nallow_private_networks: true\nretry_backoff: 1ms\n%s", s.srv.URL, extra)
	return &instance{c: connectortest.Build(t, "github", id, cfg), key: []byte("key of " + id), ops: saas.NewMemoryOperations()}
}

func (in *instance) call(t *testing.T, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	for _, tl := range in.c.Tools() {
		if tl.Name == tool {
			return tl.Run(context.Background(), &connectors.Call{
				Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
				Credentials: connectortest.Creds{"token": token}, OperationID: op,
				Key: func() []byte { return in.key }, Operations: in.ops,
			})
		}
	}
	t.Fatalf("no tool %s", tool)
	return nil, nil
}

// outcome is a call's result and error together, to pass to decode.
type outcome struct {
	res *legate.Result
	err error
}

func (in *instance) do(t *testing.T, tenant, tool, args, op string) outcome {
	t.Helper()
	res, err := in.call(t, tenant, tool, args, op)
	return outcome{res, err}
}

func decode[T any](t *testing.T, o outcome) T {
	t.Helper()
	res, err := o.res, o.err
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Structured)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t *testing.T, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

func TestListIssuesWalksPages(t *testing.T) {
	s := newStandin(t)
	s.seed(12) // 8 issues and 4 pull requests
	in := build(t, s, "github", "")
	var titles []string
	cursor, pages := "", 0
	for {
		args := `{"repo":"acme/api","limit":3}`
		if cursor != "" {
			args = fmt.Sprintf(`{"repo":"acme/api","limit":3,"cursor":%q}`, cursor)
		}
		l := decode[saas.List[model.Issue]](t, in.do(t, "t1", "list_issues", args, ""))
		pages++
		for _, is := range l.Items {
			titles = append(titles, is.Title)
			if is.Contract != "issue.v1" || !strings.HasPrefix(is.Ref, "issue://") || is.ExternalID != fmt.Sprintf("acme/api#%d", is.Number) || is.State != "open" || is.Author == nil {
				t.Errorf("issue %+v", is)
			}
		}
		if l.NextCursor == "" {
			break
		}
		if l.NextCursor == fmt.Sprint(pages+1) {
			t.Fatalf("next_cursor %q is GitHub's page number", l.NextCursor)
		}
		cursor = l.NextCursor
	}
	want := "issue 10,issue 9,issue 7,issue 6,issue 4,issue 3,issue 1,issue 0"
	if pages != 4 || strings.Join(titles, ",") != want {
		t.Fatalf("%d pages: %v; want 4 pages of %s", pages, titles, want)
	}
}

func TestGetIssueByRefOrNumber(t *testing.T) {
	s := newStandin(t)
	s.seed(2)
	in := build(t, s, "github", "")
	byNumber := decode[model.Issue](t, in.do(t, "t1", "get_issue", `{"repo":"acme/api","number":2}`, ""))
	byRef := decode[model.Issue](t, in.do(t, "t1", "get_issue", fmt.Sprintf(`{"issue":%q}`, byNumber.Ref), ""))
	if byRef.Title != "issue 1" || byRef.Ref != byNumber.Ref || byRef.URL == "" {
		t.Fatalf("by ref %+v, by number %+v", byRef, byNumber)
	}
	_, err := in.call(t, "t1", "get_issue", `{"repo":"acme/api","number":99}`, "")
	wantCode(t, err, legate.CodeNotFound)
	_, err = in.call(t, "t1", "get_issue", `{"repo":"acme/api"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
}

func TestCursorsAndRefsStayWhereTheyWereMade(t *testing.T) {
	s := newStandin(t)
	s.seed(6)
	a, b := build(t, s, "github", ""), build(t, s, "github-2", "")
	l := decode[saas.List[model.Issue]](t, a.do(t, "t1", "list_issues", `{"repo":"acme/api","limit":2}`, ""))
	cursor := fmt.Sprintf(`{"repo":"acme/api","cursor":%q}`, l.NextCursor)
	if _, err := a.call(t, "t1", "list_issues", cursor, ""); err != nil {
		t.Fatal(err)
	}
	before := s.count("list")
	_, err := a.call(t, "t2", "list_issues", cursor, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = b.call(t, "t1", "list_issues", cursor, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	if s.count("list") != before {
		t.Errorf("requests sent for refused cursors")
	}
	ref := fmt.Sprintf(`{"issue":%q,"body":"hi"}`, l.Items[0].Ref)
	_, err = a.call(t, "t2", "comment_issue", ref, "op-1")
	wantCode(t, err, legate.CodeNotFound)
	_, err = b.call(t, "t1", "comment_issue", ref, "op-2")
	wantCode(t, err, legate.CodeNotFound)
	if s.createCount() != 0 {
		t.Fatal("wrote for a refused ref")
	}
}

func TestRepositoriesAllowList(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "github", "repositories: [acme/web]")
	_, err := in.call(t, "t1", "list_issues", `{"repo":"acme/api"}`, "")
	wantCode(t, err, legate.CodePermissionDenied)
	_, err = in.call(t, "t1", "create_issue", `{"repo":"acme/api","title":"x"}`, "op")
	wantCode(t, err, legate.CodePermissionDenied)
	_, err = in.call(t, "t1", "list_issues", `{"repo":"../etc"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	if s.count("list")+s.createCount() != 0 {
		t.Fatal("a request reached GitHub")
	}
}

func TestCreateAndComment(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "github", "")
	is := decode[model.Issue](t, in.do(t, "t1", "create_issue", `{"repo":"acme/api","title":"Crash on start","body":"Steps:\n1. run","labels":["bug"]}`, "op-1"))
	if is.Number != 1 || is.Title != "Crash on start" || is.Body != "Steps:\n1. run" || strings.Join(is.Labels, ",") != "bug" {
		t.Fatalf("created %+v", is)
	}
	s.mu.Lock()
	stored := s.issues[0].Body
	s.mu.Unlock()
	if stored != "Steps:\n1. run" {
		t.Fatalf("GitHub holds the body %q; want the text alone (markers are off)", stored)
	}
	cm := decode[model.Message](t, in.do(t, "t1", "comment_issue", fmt.Sprintf(`{"issue":%q,"body":"looking"}`, is.Ref), "op-2"))
	if cm.Text != "looking" || cm.ThreadRef != is.Ref || cm.Contract != "message.v1" {
		t.Fatalf("comment %+v", cm)
	}
	// The same operations again return the first outcomes.
	again := decode[model.Issue](t, in.do(t, "t1", "create_issue", `{"repo":"acme/api","title":"Crash on start","body":"Steps:\n1. run","labels":["bug"]}`, "op-1"))
	if again.Ref != is.Ref || s.createCount() != 2 {
		t.Fatalf("replay: %+v after %d writes", again, s.createCount())
	}
}

func TestRateLimitIsWaitedThenSucceeds(t *testing.T) {
	tests := map[string]func(w http.ResponseWriter){
		"429 Retry-After": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"message":"slow down"}`))
		},
		"secondary limit": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"message":"You have exceeded a secondary rate limit","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`))
		},
		"primary limit": func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Limit", "5000")
			w.Header().Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(time.Second).Unix()))
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"message":"API rate limit exceeded"}`))
		},
	}
	for name, refuse := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			s.seed(2)
			in := build(t, s, "github", "")
			s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
				if n == 1 {
					refuse(w)
					return true
				}
				return false
			}
			l := decode[saas.List[model.Issue]](t, in.do(t, "t1", "list_issues", `{"repo":"acme/api"}`, ""))
			if len(l.Items) != 2 || s.count("list") != 2 {
				t.Fatalf("%d items after %d requests; want 2 after 2", len(l.Items), s.count("list"))
			}
		})
	}
	t.Run("a wait past max_retry_wait is returned", func(t *testing.T) {
		s := newStandin(t)
		in := build(t, s, "github", "")
		s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		_, err := in.call(t, "t1", "list_issues", `{"repo":"acme/api"}`, "")
		if le := wantCode(t, err, legate.CodeRateLimited); le.RetryAfter != time.Hour || s.count("list") != 1 {
			t.Errorf("RetryAfter %v after %d requests", le.RetryAfter, s.count("list"))
		}
	})
}

// A primary rate limit reset an hour away is returned, and does not hold
// back the next call: the instance's one go-github client serves every
// token (per-user connections have a limit each), so it must not refuse
// a call unsent for a limit another answered.
func TestRateLimitHoldsBackNoLaterCall(t *testing.T) {
	s := newStandin(t)
	s.seed(1)
	in := build(t, s, "github", "")
	s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
		if n > 1 {
			return false
		}
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Limit", "5000")
		w.Header().Set("X-RateLimit-Reset", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"message":"API rate limit exceeded"}`))
		return true
	}
	_, err := in.call(t, "t1", "list_issues", `{"repo":"acme/api"}`, "")
	if le := wantCode(t, err, legate.CodeRateLimited); le.RetryAfter < 59*time.Minute {
		t.Errorf("RetryAfter %v, want the hour to the reset", le.RetryAfter)
	}
	l := decode[saas.List[model.Issue]](t, in.do(t, "t1", "list_issues", `{"repo":"acme/api"}`, ""))
	if len(l.Items) != 1 || s.count("list") != 2 {
		t.Fatalf("%d items after %d requests; want 1 after 2", len(l.Items), s.count("list"))
	}
}

func TestFailuresMapToTheirClass(t *testing.T) {
	status := func(code int) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"message":"refused %s"}`, token)
		}
	}
	body := func(b string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/json"); w.Write([]byte(b)) }
	}
	tests := map[string]struct {
		answer   func(w http.ResponseWriter)
		code     legate.Code
		attempts int
	}{
		"401":            {status(401), legate.CodeAuthExpired, 1},
		"403":            {status(403), legate.CodePermissionDenied, 1},
		"404":            {status(404), legate.CodeNotFound, 1},
		"409":            {status(409), legate.CodeConflict, 1},
		"410":            {status(410), legate.CodeNotFound, 1},
		"422":            {status(422), legate.CodeInvalidArgument, 1},
		"500":            {status(500), legate.CodeTransient, 3},
		"502":            {status(502), legate.CodeTransient, 3},
		"malformed body": {body(`<html>oops</html>`), legate.CodeAdapterMapping, 1},
		"wrong shape":    {body(`{"issues":[]}`), legate.CodeAdapterMapping, 1},
		"no number":      {body(`[{"title":"x"}]`), legate.CodeAdapterMapping, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			in := build(t, s, "github", "")
			s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
				tc.answer(w)
				return true
			}
			res, err := in.call(t, "t1", "list_issues", `{"repo":"acme/api"}`, "")
			le := wantCode(t, err, tc.code)
			if n := s.count("list"); n != tc.attempts {
				t.Errorf("%d requests; want %d", n, tc.attempts)
			}
			if !strings.HasPrefix(le.Message, "github: ") {
				t.Errorf("message %q", le.Message)
			}
			noToken(t, res, err)
		})
	}
}

func noToken(t *testing.T, res *legate.Result, err error) {
	t.Helper()
	var parts []string
	if res != nil {
		b, _ := json.Marshal(res.Structured)
		parts = append(parts, string(b), res.Text)
	}
	if err != nil {
		parts = append(parts, err.Error())
		var le *legate.Error
		if errors.As(err, &le) && le.Err != nil {
			parts = append(parts, le.Err.Error())
		}
	}
	for _, p := range parts {
		if strings.Contains(p, "7f1c9a2b5e0d") {
			t.Fatalf("the token shows in %q", p)
		}
	}
}

func TestConnectionTestReportsScopes(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "github", "")
	report := func(tok string) (string, error) {
		var lines []string
		ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
		err := in.c.Test(ctx, connectortest.Creds{"token": tok})
		return strings.Join(lines, "\n"), err
	}
	out, err := report(token)
	if err != nil || !strings.Contains(out, "GET /user: ok, legate-bot (id 7)") || !strings.Contains(out, "scopes granted: read:org, repo") {
		t.Fatalf("%v\n%s", err, out)
	}
	noToken(t, &legate.Result{Text: out}, err)
	s.scopes = "read:org"
	out, err = report(token)
	wantCode(t, err, legate.CodePermissionDenied)
	if !strings.Contains(out, "MISSING") {
		t.Errorf("report:\n%s", out)
	}
	_, err = report("ghp_wrong")
	wantCode(t, err, legate.CodeAuthExpired)
	// What the toolsets offered need: actions and its workflow scope
	// only when actions is offered.
	s.scopes = "repo"
	if out, _ = report(token); !strings.Contains(out, "pull_requests  needs repo") || strings.Contains(out, "workflow") {
		t.Errorf("default toolsets:\n%s", out)
	}
	in = build(t, s, "github", "toolsets: [default, actions]")
	if out, _ = report(token); !strings.Contains(out, "scope workflow     MISSING needed by rerun_workflow_run") {
		t.Errorf("with actions, no workflow scope:\n%s", out)
	}
	s.scopes = ""
	if out, err = report(token); err != nil || !strings.Contains(out, "actions        Actions: read and write") {
		t.Errorf("fine-grained token: %v\n%s", err, out)
	}
}
