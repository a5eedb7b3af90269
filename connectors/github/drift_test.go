package github_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v84/github"
	"github.com/google/jsonschema-go/jsonschema"
)

// specSchemas are the response schemas of testdata/openapi.json (GitHub's
// REST description, trimmed to the stand-in's endpoints), by op, made
// fit to check a stand-in with: see relax.
func specSchemas(t *testing.T) map[string]*jsonschema.Resolved {
	t.Helper()
	b, err := os.ReadFile("testdata/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec struct{ Schemas map[string]any }
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for op, raw := range spec.Schemas {
		b, _ := json.Marshal(relax(raw))
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if out[op], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	return out
}

// mergeAllOf folds the object schemas of v's allOf into v, so that
// additionalProperties: false of one part does not refuse the properties
// of another.
func mergeAllOf(v map[string]any) {
	parts, ok := v["allOf"].([]any)
	if !ok {
		return
	}
	props, _ := v["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	for _, p := range parts {
		part, ok := p.(map[string]any)
		if !ok || part["properties"] == nil {
			return // not all objects: left as it is
		}
		for name, s := range part["properties"].(map[string]any) {
			props[name] = s
		}
	}
	delete(v, "allOf")
	v["type"], v["properties"] = "object", props
}

// relax makes a response schema of GitHub's fit for a stand-in that sends
// the fields the connector reads, not all GitHub sends: required is
// dropped, and in its place an object's properties are all it may have
// (additionalProperties: false where the description leaves it open), so
// that every field the stand-in sends must be one GitHub describes, of its
// type, enum and nullability. Without required, oneOf alternatives no
// longer exclude one another: oneOf becomes anyOf; allOf's object parts
// are merged.
func relax(v any) any {
	switch v := v.(type) {
	case []any:
		for i := range v {
			v[i] = relax(v[i])
		}
	case map[string]any:
		delete(v, "required")
		mergeAllOf(v)
		if one, ok := v["oneOf"]; ok {
			delete(v, "oneOf")
			v["anyOf"] = one
		}
		for k, sub := range v {
			if k != "properties" {
				v[k] = relax(sub)
				continue
			}
			for name, p := range sub.(map[string]any) {
				sub.(map[string]any)[name] = relax(p)
			}
		}
		if _, open := v["additionalProperties"]; !open && v["properties"] != nil {
			v["additionalProperties"] = false
		}
	}
	return v
}

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

// The stand-in answers as GitHub's REST description says (testdata/
// openapi.json; see testdata/README.md) and in the shapes go-github
// decodes: every field it sends is one GitHub describes, of its type, enum
// and nullability, and a field of go-github's type for the endpoint. A
// field misnamed, mistyped or given a value GitHub does not fails here.
func TestStandinAnswersDecodeStrictly(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	spec := specSchemas(t)
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
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Errorf("%s answer is not JSON: %v", op, err)
			} else if schema := spec[op]; schema == nil {
				t.Errorf("testdata/openapi.json has no schema for %s", op)
			} else if err := schema.Validate(v); err != nil {
				t.Errorf("%s answer does not match GitHub's description: %v\n%.300s", op, err, body)
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
