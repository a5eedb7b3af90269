package pulls

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
)

// writes are the writes of the pull_requests toolset.
type writes struct{ Tools }

type createPullIn struct {
	Repo  string `json:"repo" jsonschema:"the repository, owner/name or its URL"`
	Title string `json:"title"`
	Head  string `json:"head" jsonschema:"the branch with the changes (owner:branch for a fork)"`
	Base  string `json:"base" jsonschema:"the branch to merge into, e.g. main"`
	Body  string `json:"body,omitempty" jsonschema:"the description, Markdown"`
	Draft bool   `json:"draft,omitempty" jsonschema:"open it as a draft"`
}

type updatePullIn struct {
	pullArg
	Title *string `json:"title,omitempty"`
	Body  *string `json:"body,omitempty" jsonschema:"a new description, replacing the old"`
	State string  `json:"state,omitempty" jsonschema:"open or closed (closing does not merge)"`
	Base  string  `json:"base,omitempty" jsonschema:"a new base branch"`
}

type requestReviewersIn struct {
	pullArg
	Reviewers []string `json:"reviewers,omitempty" jsonschema:"logins of the people to ask"`
	Teams     []string `json:"team_reviewers,omitempty" jsonschema:"slugs of the teams to ask"`
}

type lineComment struct {
	Path string `json:"path" jsonschema:"the file's path in the pull request"`
	Line int    `json:"line" jsonschema:"the line in the file the comment is on (of the diff's new side, or old side with side LEFT)"`
	Side string `json:"side,omitempty" jsonschema:"RIGHT (the default, the new text) or LEFT"`
	Body string `json:"body"`
}

type submitReviewIn struct {
	pullArg
	Event    string        `json:"event" jsonschema:"COMMENT, APPROVE or REQUEST_CHANGES"`
	Body     string        `json:"body,omitempty" jsonschema:"the review's text (needed for COMMENT and REQUEST_CHANGES)"`
	Comments []lineComment `json:"comments,omitempty" jsonschema:"comments on lines of the diff"`
	CommitID string        `json:"commit_id,omitempty" jsonschema:"the head commit reviewed; the latest when absent"`
}

type mergePullIn struct {
	pullArg
	Method  string `json:"method,omitempty" jsonschema:"merge (the default), squash or rebase"`
	SHA     string `json:"sha,omitempty" jsonschema:"the head commit expected; GitHub refuses the merge if the head moved (CONFLICT)"`
	Title   string `json:"commit_title,omitempty"`
	Message string `json:"commit_message,omitempty"`
}

func (t writes) list() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[Pull](connectors.NewTool("create_pull",
			"Open a pull request from head into base; returns it. "+saas.OnceNote, legate.ClassWrite, t.create)),
		connectors.Returning[Pull](connectors.NewTool("update_pull",
			"Change a pull request: title, body, state (open, closed), base; what is not given stays. Marking a draft ready is not in GitHub's REST API: do it on GitHub. "+saas.OnceNote,
			legate.ClassWrite, t.update)),
		connectors.Returning[Pull](connectors.NewTool("request_reviewers",
			"Ask people (reviewers) or teams (team_reviewers) to review a pull request; returns it. "+saas.OnceNote, legate.ClassWrite, t.request)),
		connectors.Returning[Review](connectors.NewTool("submit_review",
			"Review a pull request: COMMENT, APPROVE or REQUEST_CHANGES, with a body and comments on lines. "+saas.OnceNote, legate.ClassWrite, t.review)),
		connectors.Returning[Pull](connectors.NewTool("merge_pull",
			"Merge a pull request (merge, squash or rebase), only if its head is still sha when given; returns it merged. "+saas.OnceNote, legate.ClassDestructive, t.merge)),
	}
}

func (t writes) create(ctx context.Context, call *connectors.Call, in *createPullIn) (*legate.Result, error) {
	repo, err := t.ParseRepo(in.Repo)
	if err != nil {
		return nil, err
	}
	if err := ghcore.CheckText(in.Title, in.Body); err != nil {
		return nil, err
	}
	if in.Head == "" || in.Base == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: give head (the branch with the changes) and base (the branch to merge into)")
	}
	owner, name, _ := strings.Cut(repo, "/")
	head := in.Head
	if !strings.Contains(head, ":") {
		head = owner + ":" + head
	}
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, marker string) (*Pull, error) {
		p, _, err := api.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{Title: &in.Title, Head: &in.Head, Base: &in.Base,
			Body: github.Ptr(t.Mark(in.Body, marker)), Draft: &in.Draft})
		if err != nil {
			return nil, err
		}
		out := t.pullOf(call, repo, p)
		return &out, nil
	}, func(ctx context.Context, api *github.Client, _ func() (string, error), marker string, since time.Time) (*Pull, error) {
		// GitHub holds one open pull request per head and base: the one
		// there, opened since, is the lost one.
		got, _, err := api.PullRequests.List(ctx, owner, name, &github.PullRequestListOptions{State: "open", Head: head, Base: in.Base})
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(got, func(p *github.PullRequest) bool {
			return ghcore.Recent(p.GetCreatedAt(), since) && p.GetTitle() == in.Title && t.Same(p.GetBody(), in.Body, marker)
		})
		if i < 0 {
			return nil, nil
		}
		out := t.pullOf(call, repo, got[i])
		return &out, nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "opened " + pullText(*out)}, nil
}

func (t writes) update(ctx context.Context, call *connectors.Call, in *updatePullIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	if in.State, err = ghcore.OneOf("state", in.State, "", "open", "closed"); err != nil {
		return nil, err
	}
	if in.Title != nil {
		err = ghcore.CheckText(*in.Title, "")
	}
	if in.Body != nil && err == nil {
		err = ghcore.CheckText("-", *in.Body)
	}
	if err != nil {
		return nil, err
	}
	req := &github.PullRequest{Title: in.Title, Body: in.Body}
	if in.State != "" {
		req.State = &in.State
	}
	if in.Base != "" {
		req.Base = &github.PullRequestBranch{Ref: &in.Base}
	}
	if req.Title == nil && req.Body == nil && req.State == nil && req.Base == nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: nothing to change: give title, body, state or base")
	}
	repo := owner + "/" + name
	holds := func(p *github.PullRequest) bool {
		return (in.Title == nil || *in.Title == p.GetTitle()) && (in.Body == nil || *in.Body == p.GetBody()) &&
			(in.State == "" || in.State == p.GetState()) && (in.Base == "" || in.Base == p.GetBase().GetRef())
	}
	out, err := t.pullWrite(ctx, call, owner, name, number, func(ctx context.Context, api *github.Client) (*github.PullRequest, error) {
		p, _, err := api.PullRequests.Edit(ctx, owner, name, number, req)
		return p, err
	}, func(p *github.PullRequest, since time.Time) bool {
		return ghcore.Recent(p.GetUpdatedAt(), since) && holds(p)
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "updated " + pullText(*out) + " in " + repo}, nil
}

// pullWrite is a write to pull request number whose lost answer is found
// by reading the pull request back: done reports whether it shows the
// write, made since.
func (t writes) pullWrite(ctx context.Context, call *connectors.Call, owner, name string, number int,
	send func(ctx context.Context, api *github.Client) (*github.PullRequest, error), done func(p *github.PullRequest, since time.Time) bool) (*Pull, error) {
	repo := owner + "/" + name
	return ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, _ string) (*Pull, error) {
		p, err := send(ctx, api)
		if err != nil {
			return nil, err
		}
		out := t.pullOf(call, repo, p)
		return &out, nil
	}, func(ctx context.Context, api *github.Client, _ func() (string, error), _ string, since time.Time) (*Pull, error) {
		p, _, err := api.PullRequests.Get(ctx, owner, name, number)
		if err != nil || !done(p, since) {
			return nil, err
		}
		out := t.pullOf(call, repo, p)
		return &out, nil
	})
}

func (t writes) request(ctx context.Context, call *connectors.Call, in *requestReviewersIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	if len(in.Reviewers)+len(in.Teams) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: give reviewers (logins) or team_reviewers (team slugs)")
	}
	out, err := t.pullWrite(ctx, call, owner, name, number, func(ctx context.Context, api *github.Client) (*github.PullRequest, error) {
		p, _, err := api.PullRequests.RequestReviewers(ctx, owner, name, number, github.ReviewersRequest{Reviewers: in.Reviewers, TeamReviewers: in.Teams})
		return p, err
	}, func(p *github.PullRequest, _ time.Time) bool {
		// Asking again who is asked already changes nothing.
		asked := t.pullOf(call, "", p).Reviewers
		return !slices.ContainsFunc(append(slices.Clone(in.Reviewers), in.Teams...), func(r string) bool { return !slices.Contains(asked, r) })
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("asked %s to review #%d", strings.Join(out.Reviewers, ", "), out.Number)}, nil
}

func (t writes) review(ctx context.Context, call *connectors.Call, in *submitReviewIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	if _, err := ghcore.OneOf("event", in.Event, "COMMENT", "APPROVE", "REQUEST_CHANGES"); err != nil || in.Event == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: event: COMMENT, APPROVE or REQUEST_CHANGES, got %q", in.Event)
	}
	if in.Event != "APPROVE" && strings.TrimSpace(in.Body) == "" && len(in.Comments) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: body: %s needs a text", in.Event)
	}
	if err := ghcore.CheckText("-", in.Body); err != nil {
		return nil, err
	}
	req := &github.PullRequestReviewRequest{Event: &in.Event}
	if in.CommitID != "" {
		req.CommitID = &in.CommitID
	}
	for _, c := range in.Comments {
		side := c.Side
		if side, err = ghcore.OneOf("comments.side", side, "RIGHT", "LEFT"); err != nil {
			return nil, err
		}
		if c.Path == "" || c.Line <= 0 || strings.TrimSpace(c.Body) == "" {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "github: comments: each needs path, a positive line and body")
		}
		req.Comments = append(req.Comments, &github.DraftReviewComment{Path: github.Ptr(c.Path), Line: github.Ptr(c.Line), Side: github.Ptr(side), Body: github.Ptr(c.Body)})
	}
	state := map[string]string{"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}[in.Event]
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, marker string) (*Review, error) {
		r := *req
		if in.Body != "" || t.Kit.Markers() {
			r.Body = github.Ptr(t.Mark(in.Body, marker))
		}
		got, _, err := api.PullRequests.CreateReview(ctx, owner, name, number, &r)
		if err != nil {
			return nil, err
		}
		out := reviewOf(got)
		return &out, nil
	}, func(ctx context.Context, api *github.Client, who func() (string, error), marker string, since time.Time) (*Review, error) {
		login, err := who()
		if err != nil {
			return nil, err
		}
		got, err := ghcore.FindLatest(func(page int) ([]*github.PullRequestReview, *github.Response, error) {
			return api.PullRequests.ListReviews(ctx, owner, name, number, &github.ListOptions{Page: page, PerPage: 100})
		}, func(r *github.PullRequestReview) bool {
			return r.GetUser().GetLogin() == login && r.GetState() == state && ghcore.Recent(r.GetSubmittedAt(), since) && t.Same(r.GetBody(), in.Body, marker)
		})
		if got == nil || err != nil {
			return nil, err
		}
		out := reviewOf(got)
		return &out, nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("reviewed #%d: %s %s", number, out.State, out.URL)}, nil
}

func (t writes) merge(ctx context.Context, call *connectors.Call, in *mergePullIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	if in.Method, err = ghcore.OneOf("method", in.Method, "merge", "squash", "rebase"); err != nil {
		return nil, err
	}
	out, err := t.pullWrite(ctx, call, owner, name, number, func(ctx context.Context, api *github.Client) (*github.PullRequest, error) {
		if _, _, err := api.PullRequests.Merge(ctx, owner, name, number, in.Message, &github.PullRequestOptions{CommitTitle: in.Title, SHA: in.SHA, MergeMethod: in.Method}); err != nil {
			return nil, err
		}
		p, _, err := api.PullRequests.Get(ctx, owner, name, number)
		if err != nil {
			return nil, ghcore.Unsure(ctx, err)
		}
		return p, nil
	}, func(p *github.PullRequest, _ time.Time) bool {
		// A pull request merges once: merged, it is the lost merge's.
		return p.GetMerged() && (in.SHA == "" || p.GetHead().GetSHA() == in.SHA)
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("merged #%d (%s) as %s", out.Number, in.Method, out.MergeCommitSHA)}, nil
}
