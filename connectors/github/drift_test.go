package github_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v84/github"
)

// answerTypes are go-github's types of the stand-in's answers, by op:
// what the connector decodes each answer into.
var answerTypes = map[string]any{
	"user": github.User{}, "list": []github.Issue{}, "get": github.Issue{}, "create": github.Issue{}, "edit_issue": github.Issue{},
	"comments": []github.IssueComment{}, "comment": github.IssueComment{}, "labels": []github.Label{},
	"pulls": []github.PullRequest{}, "pull": github.PullRequest{}, "create_pull": github.PullRequest{}, "update_pull": github.PullRequest{},
	"request_reviewers": github.PullRequest{}, "pull_files": []github.CommitFile{}, "reviews": []github.PullRequestReview{},
	"submit_review": github.PullRequestReview{}, "review_comments": []github.PullRequestComment{}, "merge_pull": github.PullRequestMergeResult{},
	"check_runs": github.ListCheckRunsResults{}, "status": github.CombinedStatus{},
	"repo": github.Repository{}, "put_file": github.RepositoryContentResponse{}, "commits": []github.RepositoryCommit{},
	"commit": github.RepositoryCommit{}, "branches": []github.Branch{}, "ref": github.Reference{}, "create_branch": github.Reference{},
	"releases": []github.RepositoryRelease{}, "latest": github.RepositoryRelease{},
	"search_code": github.CodeSearchResult{}, "search_issues": github.IssuesSearchResult{}, "search_repositories": github.RepositoriesSearchResult{},
	"runs": github.WorkflowRuns{}, "run": github.WorkflowRun{}, "jobs": github.Jobs{}, "rerun_workflow_run": struct{}{},
	"notifications": []github.Notification{},
}

// drift is why body does not decode into op's type with unknown fields
// disallowed, "" when it does.
func drift(op string, body []byte) string {
	typ, ok := answerTypes[op]
	if op == "contents" { // a file is an object, a directory an array
		typ, ok = github.RepositoryContent{}, true
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			typ = []github.RepositoryContent{}
		}
	}
	if !ok {
		return "no go-github type for op " + op
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(reflect.New(reflect.TypeOf(typ)).Interface()); err != nil {
		return err.Error()
	}
	return ""
}

// The stand-in answers in the shapes go-github decodes: every field it
// sends is a field of go-github's type for the endpoint, of that field's
// type. A field misnamed or mistyped in the stand-in fails here. (It is
// checked against the client library's types, which follow GitHub's REST
// description; see README.md.)
func TestStandinAnswersDecodeStrictly(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	check := func(t *testing.T, s *standin) {
		s.record = func(op string, status int, contentType string, body []byte) {
			if status >= 300 || !strings.HasPrefix(contentType, "application/json") || len(body) == 0 {
				return
			}
			mu.Lock()
			seen[op] = true
			mu.Unlock()
			if why := drift(op, body); why != "" {
				t.Errorf("%s answer drifts from go-github's type: %s\n%.300s", op, why, body)
			}
		}
	}
	for name, run := range toolCases {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			check(t, s)
			run(t, s, build(t, s, "github", "toolsets: [all]"))
		})
	}
	// The reads a write makes to find itself after a lost answer.
	for name, setup := range writeCases {
		t.Run("lost "+name, func(t *testing.T) {
			s := newStandin(t)
			var l loseFirst
			s.lose = l.lose
			args, _ := setup(s, 0)
			check(t, s)
			l.arm()
			if _, err := build(t, s, "github", "toolsets: [all]").call(t, "t1", name, args, "op"); err != nil {
				t.Fatal(err)
			}
		})
	}
	for op := range answerTypes {
		if !seen[op] && op != "create" && op != "list" {
			t.Errorf("no tool case made the stand-in answer %s", op)
		}
	}
}
