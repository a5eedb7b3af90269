package github

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// issues are the tools of the issues toolset.
type issues struct{ *ghcore.Core }

// issueArg names an issue by its ref, GitHub's id or URL, or by repository and number.
type issueArg struct {
	Issue  string `json:"issue,omitempty" jsonschema:"the issue: its ref, owner/name#123 or its URL; or give repo and number"`
	Repo   string `json:"repo,omitempty" jsonschema:"the repository, owner/name or its URL, with number"`
	Number int    `json:"number,omitempty" jsonschema:"the issue's number in repo"`
}

func (a issueArg) arg() ghcore.NumberArg {
	return ghcore.NumberArg{Ref: a.Issue, Repo: a.Repo, Number: a.Number}
}

type getIssueIn struct {
	issueArg
}

type listIssuesIn struct {
	saas.Page
	Repo   string   `json:"repo" jsonschema:"the repository, owner/name or its URL"`
	State  string   `json:"state,omitempty" jsonschema:"open (the default), closed or all"`
	Labels []string `json:"labels,omitempty" jsonschema:"only issues with all these labels"`
}

type createIssueIn struct {
	Repo   string   `json:"repo" jsonschema:"the repository, owner/name or its URL"`
	Title  string   `json:"title" jsonschema:"the issue's title"`
	Body   string   `json:"body,omitempty" jsonschema:"the issue's text, Markdown"`
	Labels []string `json:"labels,omitempty" jsonschema:"labels to set (they must exist in the repository)"`
}

type commentIssueIn struct {
	issueArg
	Body string `json:"body" jsonschema:"the comment, Markdown"`
}

type listCommentsIn struct {
	saas.Page
	issueArg
}

type updateIssueIn struct {
	issueArg
	Title       *string   `json:"title,omitempty" jsonschema:"a new title"`
	Body        *string   `json:"body,omitempty" jsonschema:"a new text, Markdown, replacing the old"`
	State       string    `json:"state,omitempty" jsonschema:"open or closed"`
	StateReason string    `json:"state_reason,omitempty" jsonschema:"with state: completed or not_planned (closed), reopened (open)"`
	Labels      *[]string `json:"labels,omitempty" jsonschema:"the labels, replacing the old ([] removes all)"`
	Assignees   *[]string `json:"assignees,omitempty" jsonschema:"the assignees' logins, replacing the old ([] removes all)"`
	Milestone   *int      `json:"milestone,omitempty" jsonschema:"the milestone's number, 0 to remove it"`
}

type listLabelsIn struct {
	saas.Page
	Repo string `json:"repo" jsonschema:"the repository, owner/name or its URL"`
}

// Label is a repository's label.
type Label struct {
	Name        string `json:"name"`
	Color       string `json:"color,omitempty" jsonschema:"hex, without #"`
	Description string `json:"description,omitempty"`
}

func (t issues) tools() []connectors.Tool {
	page := fmt.Sprintf(" A page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", ghcore.DefaultPage, ghcore.MaxPage)
	return []connectors.Tool{
		connectors.Returning[model.Issue](connectors.NewTool("get_issue",
			"Read one issue (issue.v1), by its ref, owner/name#123, its URL, or repo and number.", legate.ClassRead, t.get)),
		connectors.Returning[saas.List[model.Issue]](connectors.NewTool("list_issues",
			"List a repository's issues (issue.v1; pull requests left out), most recently created first."+page, legate.ClassRead, t.list)),
		connectors.Returning[model.Issue](connectors.NewTool("create_issue",
			"Open an issue in a repository; returns it (issue.v1). "+saas.OnceNote, legate.ClassWrite, t.create)),
		connectors.Returning[model.Message](connectors.NewTool("comment_issue",
			"Comment on an issue or a pull request; returns the comment (message.v1). "+saas.OnceNote, legate.ClassWrite, t.comment)),
		connectors.Returning[saas.List[model.Message]](connectors.NewTool("list_issue_comments",
			"List the comments on an issue or a pull request's conversation (message.v1), oldest first."+page, legate.ClassRead, t.comments)),
		connectors.Returning[model.Issue](connectors.NewTool("update_issue",
			"Change an issue: title, body, state (open, closed, with state_reason), labels, assignees, milestone; what is not given stays. Returns it (issue.v1). "+saas.OnceNote,
			legate.ClassWrite, t.update)),
		connectors.Returning[saas.List[Label]](connectors.NewTool("list_labels",
			"List a repository's labels: name, color, description."+page, legate.ClassRead, t.labels)),
	}
}

func (t issues) get(ctx context.Context, call *connectors.Call, in *getIssueIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "issue", in.arg())
	if err != nil {
		return nil, err
	}
	var out model.Issue
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		is, _, err := api.Issues.Get(ctx, owner, name, number)
		if err != nil {
			return err
		}
		out, err = t.IssueOf(call, owner+"/"+name, is)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: issueText(out, true), Meta: ghcore.AuthorMeta(out.Author)}, nil
}

func (t issues) list(ctx context.Context, call *connectors.Call, in *listIssuesIn) (*legate.Result, error) {
	repo, err := t.ParseRepo(in.Repo)
	if err != nil {
		return nil, err
	}
	if in.State, err = ghcore.OneOf("state", in.State, "open", "closed", "all"); err != nil {
		return nil, err
	}
	owner, name, _ := strings.Cut(repo, "/")
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]model.Issue, *github.Response, error) {
		got, resp, err := api.Issues.ListByRepo(ctx, owner, name, &github.IssueListByRepoOptions{
			State: in.State, Labels: in.Labels, Sort: "created", Direction: "desc", ListOptions: lo})
		if err != nil {
			return nil, nil, err
		}
		items := make([]model.Issue, 0, len(got))
		for _, is := range got {
			if is.IsPullRequest() {
				continue
			}
			m, err := t.IssueOf(call, repo, is)
			if err != nil {
				return nil, nil, err
			}
			items = append(items, m)
		}
		return items, resp, nil
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "issue(s) in "+repo, func(is model.Issue) string { return issueText(is, false) }), nil
}

func (t issues) create(ctx context.Context, call *connectors.Call, in *createIssueIn) (*legate.Result, error) {
	repo, err := t.ParseRepo(in.Repo)
	if err != nil {
		return nil, err
	}
	if err := ghcore.CheckText(in.Title, in.Body); err != nil {
		return nil, err
	}
	owner, name, _ := strings.Cut(repo, "/")
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, marker string) (*model.Issue, error) {
		req := &github.IssueRequest{Title: github.Ptr(in.Title), Body: github.Ptr(t.Mark(in.Body, marker))}
		if len(in.Labels) > 0 {
			req.Labels = &in.Labels
		}
		is, _, err := api.Issues.Create(ctx, owner, name, req)
		if err != nil {
			return nil, err
		}
		m, err := t.IssueOf(call, repo, is)
		return &m, err
	}, func(ctx context.Context, api *github.Client, who func() (string, error), marker string, since time.Time) (*model.Issue, error) {
		login, err := who()
		if err != nil {
			return nil, err
		}
		opts := &github.IssueListByRepoOptions{State: "all", Creator: login, Sort: "created", Direction: "desc", Since: since, ListOptions: github.ListOptions{PerPage: 100}}
		is, err := ghcore.FindIn(func(page int) ([]*github.Issue, *github.Response, error) {
			opts.ListOptions.Page = page
			return api.Issues.ListByRepo(ctx, owner, name, opts)
		}, func(is *github.Issue) bool {
			return ghcore.Recent(is.GetCreatedAt(), since) && (t.Kit.Markers() || is.GetTitle() == in.Title) && t.Same(is.GetBody(), in.Body, marker)
		})
		if is == nil || err != nil {
			return nil, err
		}
		m, err := t.IssueOf(call, repo, is)
		return &m, err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "opened " + issueText(*out, false)}, nil
}

func (t issues) comment(ctx context.Context, call *connectors.Call, in *commentIssueIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "issue", in.arg())
	if err != nil {
		return nil, err
	}
	if err := ghcore.CheckBody(in.Body); err != nil {
		return nil, err
	}
	issue := ghcore.IssueID(owner+"/"+name, number)
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, marker string) (*model.Message, error) {
		cm, _, err := api.Issues.CreateComment(ctx, owner, name, number, &github.IssueComment{Body: github.Ptr(t.Mark(in.Body, marker))})
		if err != nil {
			return nil, err
		}
		m, err := t.CommentOf(call, issue, cm)
		return &m, err
	}, func(ctx context.Context, api *github.Client, who func() (string, error), marker string, since time.Time) (*model.Message, error) {
		login, err := who()
		if err != nil {
			return nil, err
		}
		opts := &github.IssueListCommentsOptions{Since: &since, ListOptions: github.ListOptions{PerPage: 100}}
		cm, err := ghcore.FindLatest(func(page int) ([]*github.IssueComment, *github.Response, error) {
			opts.Page = page
			return api.Issues.ListComments(ctx, owner, name, number, opts)
		}, func(cm *github.IssueComment) bool {
			return cm.GetUser().GetLogin() == login && ghcore.Recent(cm.GetCreatedAt(), since) && t.Same(cm.GetBody(), in.Body, marker)
		})
		if cm == nil || err != nil {
			return nil, err
		}
		m, err := t.CommentOf(call, issue, cm)
		return &m, err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "commented on " + issue + ": " + out.URL}, nil
}

func (t issues) comments(ctx context.Context, call *connectors.Call, in *listCommentsIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "issue", in.arg())
	if err != nil {
		return nil, err
	}
	issue := ghcore.IssueID(owner+"/"+name, number)
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]model.Message, *github.Response, error) {
		got, resp, err := api.Issues.ListComments(ctx, owner, name, number, &github.IssueListCommentsOptions{ListOptions: lo})
		if err != nil {
			return nil, nil, err
		}
		items, err := saas.Convert(got, func(cm *github.IssueComment) (model.Message, error) { return t.CommentOf(call, issue, cm) })
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "comment(s) on "+issue, func(m model.Message) string {
		return fmt.Sprintf("%s at %s: %s", ghcore.Login(m.Sender), m.SentAt.Format(time.RFC3339), m.Text)
	}), nil
}

func (t issues) update(ctx context.Context, call *connectors.Call, in *updateIssueIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "issue", in.arg())
	if err != nil {
		return nil, err
	}
	req, err := in.request()
	if err != nil {
		return nil, err
	}
	repo := owner + "/" + name
	unset := in.Milestone != nil && *in.Milestone == 0 // GitHub takes null, not 0: a call of its own
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, _ string) (*model.Issue, error) {
		var is *github.Issue
		var err error
		if *req != (github.IssueRequest{}) {
			is, _, err = api.Issues.Edit(ctx, owner, name, number, req)
		}
		if err == nil && unset {
			is, _, err = api.Issues.RemoveMilestone(ctx, owner, name, number)
		}
		if err != nil {
			return nil, err
		}
		m, err := t.IssueOf(call, repo, is)
		return &m, err
	}, func(ctx context.Context, api *github.Client, _ func() (string, error), _ string, since time.Time) (*model.Issue, error) {
		// A lost edit is found when the issue already is as asked,
		// changed since; sending it again would change nothing anyway.
		is, _, err := api.Issues.Get(ctx, owner, name, number)
		if err != nil || !ghcore.Recent(is.GetUpdatedAt(), since) || !in.holds(is) {
			return nil, err
		}
		m, err := t.IssueOf(call, repo, is)
		return &m, err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "updated " + issueText(*out, false)}, nil
}

// request checks the update and makes GitHub's request of it.
func (in *updateIssueIn) request() (*github.IssueRequest, error) {
	req := &github.IssueRequest{Title: in.Title, Body: in.Body, Labels: in.Labels, Assignees: in.Assignees}
	if in.Title != nil {
		if err := ghcore.CheckText(*in.Title, ""); err != nil {
			return nil, err
		}
	}
	if in.Body != nil && len(*in.Body) > ghcore.MaxBodyBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: body: at most %d bytes, got %d", ghcore.MaxBodyBytes, len(*in.Body))
	}
	if in.State != "" {
		if _, err := ghcore.OneOf("state", in.State, "open", "closed"); err != nil {
			return nil, err
		}
		req.State = &in.State
	}
	if in.StateReason != "" {
		if _, err := ghcore.OneOf("state_reason", in.StateReason, "completed", "not_planned", "reopened"); err != nil {
			return nil, err
		}
		req.StateReason = &in.StateReason
	}
	switch {
	case in.Milestone != nil && *in.Milestone < 0:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: milestone: a milestone's number, or 0 to remove it; got %d", *in.Milestone)
	case in.Milestone != nil && *in.Milestone > 0:
		req.Milestone = in.Milestone
	}
	if *req == (github.IssueRequest{}) && in.Milestone == nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: nothing to change: give title, body, state, labels, assignees or milestone")
	}
	return req, nil
}

// holds reports whether is already has every change of the update.
func (in *updateIssueIn) holds(is *github.Issue) bool {
	names := func(n []string) []string { n = slices.Clone(n); slices.Sort(n); return n }
	var labels, assignees []string
	for _, l := range is.Labels {
		labels = append(labels, l.GetName())
	}
	for _, a := range is.Assignees {
		assignees = append(assignees, a.GetLogin())
	}
	return (in.Title == nil || *in.Title == is.GetTitle()) && (in.Body == nil || *in.Body == is.GetBody()) &&
		(in.State == "" || in.State == is.GetState()) && (in.StateReason == "" || in.StateReason == is.GetStateReason()) &&
		(in.Labels == nil || slices.Equal(names(*in.Labels), names(labels))) &&
		(in.Assignees == nil || slices.Equal(names(*in.Assignees), names(assignees))) &&
		(in.Milestone == nil || *in.Milestone == is.GetMilestone().GetNumber())
}

func (t issues) labels(ctx context.Context, call *connectors.Call, in *listLabelsIn) (*legate.Result, error) {
	repo, err := t.ParseRepo(in.Repo)
	if err != nil {
		return nil, err
	}
	owner, name, _ := strings.Cut(repo, "/")
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Label, *github.Response, error) {
		got, resp, err := api.Issues.ListLabels(ctx, owner, name, &lo)
		var items []Label
		for _, l := range got {
			items = append(items, Label{Name: l.GetName(), Color: l.GetColor(), Description: l.GetDescription()})
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "label(s) in "+repo, func(l Label) string { return l.Name + " " + l.Description }), nil
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
