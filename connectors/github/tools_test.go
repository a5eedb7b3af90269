package github_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// The results of the tools, as a client decodes them.
type (
	pullOut struct {
		model.Object
		Number             int
		Title, Body, State string
		Head, Base         string
		HeadSHA            string `json:"head_sha"`
		Merged             bool
		MergeCommitSHA     string   `json:"merge_commit_sha"`
		Reviewers          []string `json:"requested_reviewers"`
		Files              []struct{ Path, Status string }
		FilesNextCursor    string `json:"files_next_cursor"`
		Diff               string
		DiffBytes          int  `json:"diff_bytes"`
		DiffTruncated      bool `json:"diff_truncated"`
		DiffNextOffset     int  `json:"diff_next_offset"`
	}
	reviewOut struct {
		ID          int64
		State, Body string
		Author      *model.Person
	}
	checksOut struct {
		SHA, State string
		Runs       []struct{ Name, Status, Conclusion string } `json:"check_runs"`
		Statuses   []struct{ Context, State string }
	}
	contentOut struct {
		Path, Type, SHA, Text string
		Size                  int
		NextOffset            int `json:"next_offset"`
		Binary, Truncated     bool
		Entries               []struct{ Name, Type string }
	}
	commitOut struct {
		SHA, Message, Author string
		Additions            int
		Files                []struct{ Path string }
	}
	runOut struct {
		ID                 int64
		Status, Conclusion string
		Attempt            int `json:"run_attempt"`
		Jobs               []struct {
			Name, Conclusion string
			FailedSteps      []string `json:"failed_steps"`
			LogTail          string   `json:"log_tail"`
			LogTruncated     bool     `json:"log_truncated"`
			LogError         string   `json:"log_error"`
		}
	}
)

// toolCase calls one tool against the stand-in and checks what it did.
type toolCase func(t *testing.T, s *standin, in *instance)

// toolCases has a case for every tool of the type (TestEveryToolHasACase).
var toolCases = map[string]toolCase{
	"get_issue": func(t *testing.T, s *standin, in *instance) {
		s.seed(2)
		o := in.do(t, "t1", "get_issue", `{"issue":"acme/api#2"}`, "")
		is := decode[model.Issue](t, o)
		wantAuthor(t, o, "alice")
		byURL := decode[model.Issue](t, in.do(t, "t1", "get_issue", fmt.Sprintf(`{"issue":"%s/acme/api/issues/2"}`, s.srv.URL), ""))
		if is.Title != "issue 1" || byURL.Ref != is.Ref {
			t.Fatalf("by id %+v, by URL %+v", is, byURL)
		}
	},
	"list_issues": func(t *testing.T, s *standin, in *instance) {
		s.seed(12)
		walk[model.Issue](t, in, "list_issues", `"repo":"acme/api"`, 4)
		wantAuthor(t, in.do(t, "t1", "list_issues", `{"repo":"acme/api"}`, ""), "") // many authors: none named
	},
	"create_issue": func(t *testing.T, s *standin, in *instance) {
		is := decode[model.Issue](t, in.do(t, "t1", "create_issue", `{"repo":"acme/api","title":"Crash","body":"on start"}`, "op-1"))
		if is.Title != "Crash" || s.writeCount("create_issue") != 1 {
			t.Fatalf("%+v", is)
		}
	},
	"comment_issue": func(t *testing.T, s *standin, in *instance) {
		s.seed(1)
		m := decode[model.Message](t, in.do(t, "t1", "comment_issue", `{"issue":"acme/api#1","body":"looking"}`, "op-1"))
		if m.Text != "looking" || s.writeCount("comment_issue") != 1 {
			t.Fatalf("%+v", m)
		}
	},
	"list_issue_comments": func(t *testing.T, s *standin, in *instance) {
		s.seed(1)
		for i := range 7 {
			in.do(t, "t1", "comment_issue", fmt.Sprintf(`{"issue":"acme/api#1","body":"comment %d"}`, i), fmt.Sprint("op-", i))
		}
		items := walk[model.Message](t, in, "list_issue_comments", `"issue":"acme/api#1"`, 3)
		if items[0].Text != "comment 0" || items[6].Text != "comment 6" {
			t.Fatalf("comments %+v", items)
		}
	},
	"update_issue": func(t *testing.T, s *standin, in *instance) {
		s.seed(1)
		is := decode[model.Issue](t, in.do(t, "t1", "update_issue", `{"issue":"acme/api#1","state":"closed","state_reason":"not_planned","labels":["bug"],"assignees":["bob"],"milestone":2}`, "op-1"))
		if is.State != "closed" || strings.Join(is.Labels, ",") != "bug" || is.ProviderMetadata["state_reason"] != "not_planned" || is.ProviderMetadata["milestone"] != "M2" {
			t.Fatalf("%+v", is)
		}
		// 0 removes the milestone (GitHub wants null), the rest stays.
		is = decode[model.Issue](t, in.do(t, "t1", "update_issue", `{"issue":"acme/api#1","milestone":0}`, "op-2"))
		if _, ok := is.ProviderMetadata["milestone"]; ok || is.State != "closed" || s.writeCount("update_issue") != 2 {
			t.Fatalf("after removing the milestone: %+v", is)
		}
	},
	"list_labels": func(t *testing.T, s *standin, in *instance) {
		walk[struct{ Name string }](t, in, "list_labels", `"repo":"acme/api"`, 3)
	},
	"list_pulls": func(t *testing.T, s *standin, in *instance) {
		for range 7 {
			s.seedPull()
		}
		items := walk[pullOut](t, in, "list_pulls", `"repo":"acme/api"`, 3)
		if items[0].Head != "feature" || items[0].Base != "main" || !strings.HasPrefix(items[0].Ref, "pull://") {
			t.Fatalf("pull %+v", items[0])
		}
	},
	"get_pull": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		o := in.do(t, "t1", "get_pull", fmt.Sprintf(`{"pull":"%s/acme/api/pull/%d"}`, s.srv.URL, n), "")
		p := decode[pullOut](t, o)
		wantAuthor(t, o, "alice")
		if len(p.Files) != 7 || !p.DiffTruncated || len(p.Diff) > 60000 || !strings.HasPrefix(p.Diff, "diff --git") || p.DiffBytes != len(s.diffOf(n)) {
			t.Fatalf("%d files, diff of %d bytes of %d, truncated %v", len(p.Files), len(p.Diff), p.DiffBytes, p.DiffTruncated)
		}
		// The rest of the diff, from diff_next_offset, joins up.
		var diff strings.Builder
		diff.WriteString(p.Diff)
		for p.DiffTruncated {
			p = decode[pullOut](t, in.do(t, "t1", "get_pull", fmt.Sprintf(`{"pull":"acme/api#%d","diff_offset":%d}`, n, p.DiffNextOffset), ""))
			diff.WriteString(p.Diff)
		}
		if diff.String() != s.diffOf(n) {
			t.Fatal("the diff's parts do not join up to the whole")
		}
	},
	"list_pull_reviews": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		items := walk[reviewOut](t, in, "list_pull_reviews", fmt.Sprintf(`"pull":"acme/api#%d"`, n), 3)
		if items[1].State != "APPROVED" || items[1].Body != "review 1" || items[1].Author.Name != "rev1" || items[6].Author != nil {
			t.Fatalf("review %+v", items[1])
		}
	},
	"list_pull_comments": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		items := walk[struct{ Path, Body string }](t, in, "list_pull_comments", fmt.Sprintf(`"repo":"acme/api","number":%d`, n), 3)
		if items[0].Path != "src/f1.go" || items[0].Body != "nit 0" {
			t.Fatalf("comment %+v", items[0])
		}
	},
	"get_pull_checks": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		c := decode[checksOut](t, in.do(t, "t1", "get_pull_checks", fmt.Sprintf(`{"pull":"acme/api#%d"}`, n), ""))
		if c.State != "failure" || len(c.Runs) != 205 || len(c.Statuses) != 3 || c.Runs[150].Conclusion != "failure" {
			t.Fatalf("state %s, %d runs, %d statuses", c.State, len(c.Runs), len(c.Statuses))
		}
	},
	"create_pull": func(t *testing.T, s *standin, in *instance) {
		p := decode[pullOut](t, in.do(t, "t1", "create_pull", `{"repo":"acme/api","title":"Fix","head":"b1","base":"main","body":"fixes"}`, "op-1"))
		if p.Title != "Fix" || p.Head != "b1" || p.State != "open" || s.writeCount("create_pull") != 1 {
			t.Fatalf("%+v", p)
		}
	},
	"update_pull": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		p := decode[pullOut](t, in.do(t, "t1", "update_pull", fmt.Sprintf(`{"pull":"acme/api#%d","title":"Retries, bounded","base":"b2"}`, n), "op-1"))
		if p.Title != "Retries, bounded" || p.Base != "b2" {
			t.Fatalf("%+v", p)
		}
	},
	"request_reviewers": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		p := decode[pullOut](t, in.do(t, "t1", "request_reviewers", fmt.Sprintf(`{"pull":"acme/api#%d","reviewers":["bob","carol"]}`, n), "op-1"))
		if strings.Join(p.Reviewers, ",") != "bob,carol" {
			t.Fatalf("%+v", p)
		}
	},
	"submit_review": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		r := decode[reviewOut](t, in.do(t, "t1", "submit_review", fmt.Sprintf(`{"pull":"acme/api#%d","event":"REQUEST_CHANGES","body":"needs a test","comments":[{"path":"src/f1.go","line":3,"body":"why?"}]}`, n), "op-1"))
		a := decode[reviewOut](t, in.do(t, "t1", "submit_review", fmt.Sprintf(`{"pull":"acme/api#%d","event":"APPROVE"}`, n), "op-2"))
		s.mu.Lock()
		last := s.rcomments[n][len(s.rcomments[n])-1]
		s.mu.Unlock()
		if r.State != "CHANGES_REQUESTED" || r.Body != "needs a test" || a.State != "APPROVED" || last.Body != "why?" || last.Line != 3 || last.Side != "RIGHT" {
			t.Fatalf("review %+v, approval %+v, line comment %+v", r, a, last)
		}
	},
	"merge_pull": func(t *testing.T, s *standin, in *instance) {
		n := s.seedPull()
		_, err := in.call(t, "t1", "merge_pull", fmt.Sprintf(`{"pull":"acme/api#%d","method":"squash","sha":"%040d"}`, n, 0), "op-1")
		wantCode(t, err, "CONFLICT")
		p := decode[pullOut](t, in.do(t, "t1", "merge_pull", fmt.Sprintf(`{"pull":"acme/api#%d","method":"squash","sha":"%040x"}`, n, 0xbeef0000+n), "op-2"))
		if !p.Merged || p.MergeCommitSHA == "" || p.State != "closed" {
			t.Fatalf("%+v", p)
		}
	},
	"get_file": func(t *testing.T, s *standin, in *instance) {
		o := in.do(t, "t1", "get_file", `{"repo":"acme/api","path":"README.md","ref":"feature"}`, "")
		f := decode[contentOut](t, o)
		wantAuthor(t, o, "") // a file's lines have many authors
		dir := decode[contentOut](t, in.do(t, "t1", "get_file", `{"repo":"acme/api","path":"src"}`, ""))
		bin := decode[contentOut](t, in.do(t, "t1", "get_file", `{"repo":"acme/api","path":"logo.png"}`, ""))
		if f.Text != "# api\n" || f.SHA == "" || dir.Type != "dir" || len(dir.Entries) != 8 || !bin.Binary || bin.Text != "" {
			t.Fatalf("file %+v, dir %+v, binary %+v", f, dir, bin)
		}
		big := decode[contentOut](t, in.do(t, "t1", "get_file", `{"repo":"acme/api","path":"src/app.go"}`, ""))
		text := big.Text
		for big.Truncated {
			big = decode[contentOut](t, in.do(t, "t1", "get_file", fmt.Sprintf(`{"repo":"acme/api","path":"src/app.go","offset":%d}`, big.NextOffset), ""))
			text += big.Text
		}
		if s.files["main"]["src/app.go"] != text {
			t.Fatal("the big file's parts do not join up to the whole")
		}
	},
	"put_file": func(t *testing.T, s *standin, in *instance) {
		f := decode[contentOut](t, in.do(t, "t1", "get_file", `{"repo":"acme/api","path":"README.md","ref":"b3"}`, ""))
		c := decode[struct {
			CommitSHA string `json:"commit_sha"`
		}](t, in.do(t, "t1", "put_file", fmt.Sprintf(`{"repo":"acme/api","path":"README.md","branch":"b3","content":"# API\n","message":"title case","sha":%q}`, f.SHA), "op-1"))
		if s.files["b3"]["README.md"] != "# API\n" || s.heads["b3"] != c.CommitSHA || s.files["main"]["README.md"] != "# api\n" {
			t.Fatalf("b3 holds %q at %s; commit %s", s.files["b3"]["README.md"], s.heads["b3"], c.CommitSHA)
		}
	},
	"create_branch": func(t *testing.T, s *standin, in *instance) {
		b := decode[struct{ Name, SHA string }](t, in.do(t, "t1", "create_branch", `{"repo":"acme/api","branch":"topic"}`, "op-1"))
		if b.Name != "topic" || b.SHA != s.heads["main"] || s.heads["topic"] != b.SHA {
			t.Fatalf("%+v", b)
		}
	},
	"list_commits": func(t *testing.T, s *standin, in *instance) {
		items := walk[commitOut](t, in, "list_commits", `"repo":"acme/api","author":"alice"`, 4)
		if !strings.HasPrefix(items[0].Message, "add src/f6.go") || items[0].Author != "alice (alice)" {
			t.Fatalf("commit %+v", items[0])
		}
	},
	"get_commit": func(t *testing.T, s *standin, in *instance) {
		o := in.do(t, "t1", "get_commit", `{"repo":"acme/api","sha":"main"}`, "")
		c := decode[commitOut](t, o)
		wantAuthor(t, o, "alice")
		if c.SHA != s.heads["main"] || len(c.Files) != 1 || c.Files[0].Path != "src/f6.go" || c.Additions != 3 {
			t.Fatalf("%+v", c)
		}
	},
	"list_branches": func(t *testing.T, s *standin, in *instance) {
		walk[struct{ Name string }](t, in, "list_branches", `"repo":"acme/api"`, 3)
	},
	"list_releases": func(t *testing.T, s *standin, in *instance) {
		walk[struct{ Tag string }](t, in, "list_releases", `"repo":"acme/api"`, 3)
	},
	"get_latest_release": func(t *testing.T, s *standin, in *instance) {
		o := in.do(t, "t1", "get_latest_release", `{"repo":"acme/api"}`, "")
		r := decode[struct{ Tag string }](t, o)
		wantAuthor(t, o, "alice")
		if r.Tag != "v1.5.0" { // v1.6.0 is a prerelease
			t.Fatalf("latest %+v", r)
		}
	},
	"search_code": func(t *testing.T, s *standin, in *instance) {
		items := walk[struct{ Repo, Path string }](t, in, "search_code", `"query":"timeout"`, 3)
		if len(items) != 14 {
			t.Fatalf("%d hits; want 7 in acme/api and 7 elsewhere", len(items))
		}
	},
	"search_issues": func(t *testing.T, s *standin, in *instance) {
		s.seed(9)
		items := walk[model.Issue](t, in, "search_issues", `"query":"issue"`, 3)
		if items[0].ProviderMetadata["repository"] != "acme/api" || items[0].ProviderMetadata["pull_request"] != true {
			t.Fatalf("hit %+v", items[0])
		}
	},
	"search_repositories": func(t *testing.T, s *standin, in *instance) {
		walk[struct{ Repo string }](t, in, "search_repositories", `"query":"service"`, 3)
	},
	"list_notifications": func(t *testing.T, s *standin, in *instance) {
		items := walk[struct{ Repo, Type, Subject string }](t, in, "list_notifications", `"all":true`, 3)
		unread := decode[saas.List[struct{ Unread bool }]](t, in.do(t, "t1", "list_notifications", `{"limit":100}`, ""))
		if len(items) != 9 || items[1].Subject != "acme/api#2" || items[1].Type != "PullRequest" || len(unread.Items) != 6 {
			t.Fatalf("%d notifications, %d unread: %+v", len(items), len(unread.Items), items)
		}
		only := build(t, s, "github", "toolsets: [notifications]\nrepositories: [acme/api]")
		if l := decode[saas.List[struct{ Repo string }]](t, only.do(t, "t1", "list_notifications", `{"all":true,"limit":100}`, "")); len(l.Items) != 8 {
			t.Fatalf("within acme/api: %+v", l.Items)
		}
	},
	"list_workflow_runs": func(t *testing.T, s *standin, in *instance) {
		walk[runOut](t, in, "list_workflow_runs", `"repo":"acme/api","branch":"main"`, 3)
	},
	"get_workflow_run": func(t *testing.T, s *standin, in *instance) {
		r := decode[runOut](t, in.do(t, "t1", "get_workflow_run", `{"repo":"acme/api","run_id":507}`, ""))
		test, lint := r.Jobs[1], r.Jobs[2]
		if r.Conclusion != "failure" || len(r.Jobs) != 3 || strings.Join(test.FailedSteps, ",") != "3 Run tests" ||
			!strings.HasSuffix(test.LogTail, "--- FAIL: TestRetry (0.02s)\nError: Process completed with exit code 1.\n") || !test.LogTruncated || len(test.LogTail) > 8000 ||
			lint.LogError == "" || s.logAuth != 0 {
			t.Fatalf("run %+v; %d log downloads carried the token", r, s.logAuth)
		}
	},
	"rerun_workflow_run": func(t *testing.T, s *standin, in *instance) {
		r := decode[runOut](t, in.do(t, "t1", "rerun_workflow_run", `{"repo":"acme/api","run_id":503,"failed_only":true}`, "op-1"))
		if r.Status != "queued" || r.Attempt != 2 || s.writeCount("rerun_workflow_run") != 1 {
			t.Fatalf("%+v", r)
		}
	},
}

// wantAuthor checks the author o's result names in its _meta for the
// gateway's provenance mark (provenance.Author), "" for none.
func wantAuthor(t *testing.T, o outcome, want string) {
	t.Helper()
	if o.err != nil {
		t.Fatal(o.err)
	}
	if a, ok := provenance.AuthorIn(o.res.Meta); a != want || ok != (want != "") || want == "" && o.res.Meta != nil {
		t.Fatalf("author %q (%v, meta %v), want %q", a, ok, o.res.Meta, want)
	}
}

// walk reads every page of a list tool at 3 items a page and returns the
// items; it fails unless there are at least minPages pages.
func walk[T any](t *testing.T, in *instance, tool, args string, minPages int) []T {
	t.Helper()
	var all []T
	cursor, pages := "", 0
	for {
		a := fmt.Sprintf(`{%s,"limit":3}`, args)
		if cursor != "" {
			a = fmt.Sprintf(`{%s,"limit":3,"cursor":%q}`, args, cursor)
		}
		l := decode[saas.List[T]](t, in.do(t, "t1", tool, a, ""))
		all = append(all, l.Items...)
		if pages++; l.NextCursor == "" || pages > 100 {
			break
		}
		cursor = l.NextCursor
	}
	if pages < minPages {
		t.Fatalf("%s: %d pages; want %d or more", tool, pages, minPages)
	}
	return all
}

// Every tool of the type does its job against the stand-in.
func TestEveryToolAgainstTheStandin(t *testing.T) {
	for name, run := range toolCases {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			run(t, s, build(t, s, "github", "toolsets: [all]"))
		})
	}
}

// Every tool of the catalog has a case, so a tool added later is tested.
func TestEveryToolHasACase(t *testing.T) {
	s := newStandin(t)
	for _, tool := range catalog(t, build(t, s, "github", "")) {
		if toolCases[tool.Name] == nil {
			t.Errorf("tool %s has no case in toolCases", tool.Name)
		}
	}
}

// catalog is every tool of the type.
func catalog(t *testing.T, in *instance) []connectors.Tool {
	t.Helper()
	tc, ok := in.c.(connectors.ToolCatalog)
	if !ok {
		t.Fatal("the connector lists no tool catalog")
	}
	return tc.ToolCatalog()
}
