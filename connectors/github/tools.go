package github

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// issueArg names an issue by its ref, or by repository and number.
type issueArg struct {
	Issue  string `json:"issue,omitempty" jsonschema:"ref of the issue, from list_issues or create_issue; or give repo and number"`
	Repo   string `json:"repo,omitempty" jsonschema:"the repository, owner/name, with number"`
	Number int    `json:"number,omitempty" jsonschema:"the issue's number in repo"`
}

type getIssueIn struct {
	issueArg
}

type listIssuesIn struct {
	saas.Page
	Repo   string   `json:"repo" jsonschema:"the repository, owner/name"`
	State  string   `json:"state,omitempty" jsonschema:"open (the default), closed or all"`
	Labels []string `json:"labels,omitempty" jsonschema:"only issues with all these labels"`
}

type createIssueIn struct {
	Repo   string   `json:"repo" jsonschema:"the repository, owner/name"`
	Title  string   `json:"title" jsonschema:"the issue's title"`
	Body   string   `json:"body,omitempty" jsonschema:"the issue's text, Markdown"`
	Labels []string `json:"labels,omitempty" jsonschema:"labels to set (they must exist in the repository)"`
}

type commentIssueIn struct {
	issueArg
	Body string `json:"body" jsonschema:"the comment, Markdown"`
}

func (c *Connector) newTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[model.Issue](connectors.NewTool("get_issue",
			"Read one issue (issue.v1), by its ref or by repo and number.", legate.ClassRead, c.getIssue)),
		connectors.Returning[saas.List[model.Issue]](connectors.NewTool("list_issues",
			fmt.Sprintf("List a repository's issues (issue.v1; pull requests left out), most recently created first, a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultIssues, MaxIssues),
			legate.ClassRead, c.listIssues)),
		connectors.Returning[model.Issue](connectors.NewTool("create_issue",
			"Open an issue in a repository; returns it (issue.v1). Retrying the same call never opens two.", legate.ClassWrite, c.createIssue)),
		connectors.Returning[model.Message](connectors.NewTool("comment_issue",
			"Comment on an issue, by its ref or by repo and number; returns the comment (message.v1). Retrying the same call never comments twice.",
			legate.ClassWrite, c.commentIssue)),
	}
}

// issue resolves an issueArg to its repository and number.
func (c *Connector) issue(call *connectors.Call, in issueArg) (owner, name string, number int, err error) {
	switch {
	case in.Issue != "" && (in.Repo != "" || in.Number != 0):
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: give issue, or repo and number, not both")
	case in.Issue != "":
		id, err := c.kit.Resolve(call, kindIssue, in.Issue)
		if err != nil {
			return "", "", 0, err
		}
		o, n, num, ok := splitIssueID(id)
		if !ok {
			return "", "", 0, legate.Errorf(legate.CodeNotFound, "github: no such issue")
		}
		owner, name, err = c.repo(o + "/" + n)
		return owner, name, num, err
	case in.Repo == "" || in.Number <= 0:
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: give issue (a ref), or repo and a positive number")
	}
	owner, name, err = c.repo(in.Repo)
	return owner, name, in.Number, err
}

func (c *Connector) getIssue(ctx context.Context, call *connectors.Call, in *getIssueIn) (*legate.Result, error) {
	owner, name, number, err := c.issue(call, in.issueArg)
	if err != nil {
		return nil, err
	}
	var out model.Issue
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.client(token)
		if err != nil {
			return err
		}
		is, _, err := api.Issues.Get(ctx, owner, name, number)
		if err != nil {
			return mapError(ctx, err)
		}
		out, err = c.issueOf(call, owner+"/"+name, is)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: issueText(out, true)}, nil
}

func (c *Connector) listIssues(ctx context.Context, call *connectors.Call, in *listIssuesIn) (*legate.Result, error) {
	owner, name, err := c.repo(in.Repo)
	if err != nil {
		return nil, err
	}
	switch in.State {
	case "":
		in.State = "open"
	case "open", "closed", "all":
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: state: open, closed or all, got %q", in.State)
	}
	p, err := c.kit.Open(call, in.Page, DefaultIssues, MaxIssues)
	if err != nil {
		return nil, err
	}
	page := 0
	if p.Token != "" {
		if page, err = strconv.Atoi(p.Token); err != nil {
			return nil, saas.Mapping("github", "a page token that is not a page number")
		}
	}
	repo := owner + "/" + name
	var out saas.List[model.Issue]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.client(token)
		if err != nil {
			return err
		}
		issues, resp, err := api.Issues.ListByRepo(ctx, owner, name, &github.IssueListByRepoOptions{
			State: in.State, Labels: in.Labels, Sort: "created", Direction: "desc",
			ListOptions: github.ListOptions{Page: page, PerPage: p.Size}})
		if err != nil {
			return mapError(ctx, err)
		}
		items := make([]model.Issue, 0, len(issues))
		for _, is := range issues {
			if is.IsPullRequest() {
				continue
			}
			m, err := c.issueOf(call, repo, is)
			if err != nil {
				return err
			}
			items = append(items, m)
		}
		next := ""
		if resp.NextPage > 0 {
			next = strconv.Itoa(resp.NextPage)
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d issue(s) in %s", len(out.Items), repo)
	for _, is := range out.Items {
		b.WriteString("\n" + issueText(is, false))
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (c *Connector) createIssue(ctx context.Context, call *connectors.Call, in *createIssueIn) (*legate.Result, error) {
	owner, name, err := c.repo(in.Repo)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(in.Title) == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: title: must not be empty")
	case len(in.Title) > MaxTitleBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: title: at most %d bytes, got %d", MaxTitleBytes, len(in.Title))
	case len(in.Body) > MaxBodyBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: body: at most %d bytes, got %d", MaxBodyBytes, len(in.Body))
	}
	repo := owner + "/" + name
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Issue]{
		Send: func(ctx context.Context, token, marker string) (*model.Issue, error) {
			api, err := c.client(token)
			if err != nil {
				return nil, err
			}
			req := &github.IssueRequest{Title: github.Ptr(in.Title), Body: github.Ptr(withMarker(in.Body, marker))}
			if len(in.Labels) > 0 {
				req.Labels = &in.Labels
			}
			is, _, err := api.Issues.Create(ctx, owner, name, req)
			if err != nil {
				return nil, mapError(ctx, err)
			}
			m, err := c.issueOf(call, repo, is)
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Issue, error) {
			is, err := c.findIssue(ctx, token, owner, name, marker, since)
			if err != nil || is == nil {
				return nil, err
			}
			m, err := c.issueOf(call, repo, is)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "opened " + issueText(*out, false)}, nil
}

func (c *Connector) commentIssue(ctx context.Context, call *connectors.Call, in *commentIssueIn) (*legate.Result, error) {
	owner, name, number, err := c.issue(call, in.issueArg)
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(in.Body) == "":
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: body: must not be empty")
	case len(in.Body) > MaxBodyBytes:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: body: at most %d bytes, got %d", MaxBodyBytes, len(in.Body))
	}
	issue := issueID(owner+"/"+name, number)
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Message]{
		Send: func(ctx context.Context, token, marker string) (*model.Message, error) {
			api, err := c.client(token)
			if err != nil {
				return nil, err
			}
			cm, _, err := api.Issues.CreateComment(ctx, owner, name, number, &github.IssueComment{Body: github.Ptr(withMarker(in.Body, marker))})
			if err != nil {
				return nil, mapError(ctx, err)
			}
			m, err := c.commentOf(call, issue, cm)
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Message, error) {
			cm, err := c.findComment(ctx, token, owner, name, number, marker, since)
			if err != nil || cm == nil {
				return nil, err
			}
			m, err := c.commentOf(call, issue, cm)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "commented on " + issue + ": " + out.URL}, nil
}

// issueText is an issue in one line, or with its body.
func issueText(is model.Issue, body bool) string {
	s := fmt.Sprintf("#%d [%s] %s", is.Number, is.State, is.Title)
	if len(is.Labels) > 0 {
		s += " (" + strings.Join(is.Labels, ", ") + ")"
	}
	if is.URL != "" {
		s += " " + is.URL
	}
	if body && is.Body != "" {
		s += "\n\n" + is.Body
	}
	return s
}
