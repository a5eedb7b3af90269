// Package pulls holds the github connector's pull_requests toolset: list,
// read with files, diff, reviews and checks; open, update, request
// reviewers, review and merge.
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
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Bounds of what get_pull and get_pull_checks read.
const (
	// MaxDiffBytes bounds the diff get_pull returns; diff_offset reads on.
	MaxDiffBytes = 60000
	// maxChecks bounds the check runs and statuses get_pull_checks reads.
	maxChecks = 300
)

// Tools are the tools of the pull_requests toolset.
type Tools struct{ *ghcore.Core }

// pullArg names a pull request by its ref, GitHub's id or URL, or by repository and number.
type pullArg struct {
	Pull   string `json:"pull,omitempty" jsonschema:"the pull request: its ref, owner/name#123 or its URL; or give repo and number"`
	Repo   string `json:"repo,omitempty" jsonschema:"the repository, owner/name or its URL, with number"`
	Number int    `json:"number,omitempty" jsonschema:"the pull request's number in repo"`
}

func (a pullArg) arg() ghcore.NumberArg {
	return ghcore.NumberArg{Ref: a.Pull, Repo: a.Repo, Number: a.Number}
}

// Pull is a pull request.
type Pull struct {
	model.Object
	Number         int           `json:"number"`
	Title          string        `json:"title"`
	Body           string        `json:"body,omitempty"`
	State          string        `json:"state" jsonschema:"open or closed"`
	Draft          bool          `json:"draft,omitempty"`
	Merged         bool          `json:"merged,omitempty"`
	Author         *model.Person `json:"author,omitempty"`
	Head           string        `json:"head" jsonschema:"the branch with the changes, owner:branch when in a fork"`
	HeadSHA        string        `json:"head_sha"`
	Base           string        `json:"base" jsonschema:"the branch the changes go into"`
	Mergeable      *bool         `json:"mergeable,omitempty" jsonschema:"absent while GitHub computes it"`
	MergeableState string        `json:"mergeable_state,omitempty" jsonschema:"clean, dirty (conflicts), blocked, behind, unstable, unknown"`
	Additions      int           `json:"additions,omitempty"`
	Deletions      int           `json:"deletions,omitempty"`
	ChangedFiles   int           `json:"changed_files,omitempty"`
	Labels         []string      `json:"labels,omitempty"`
	Reviewers      []string      `json:"requested_reviewers,omitempty" jsonschema:"logins and team slugs asked to review"`
	MergeCommitSHA string        `json:"merge_commit_sha,omitempty"`
	CreatedAt      time.Time     `json:"created_at,omitzero"`
	UpdatedAt      time.Time     `json:"updated_at,omitzero"`
	MergedAt       time.Time     `json:"merged_at,omitzero"`
}

// PullDetail is a pull request with a page of its files and its diff.
type PullDetail struct {
	Pull
	Files           []ghcore.ChangedFile `json:"files"`
	FilesNextCursor string               `json:"files_next_cursor,omitempty" jsonschema:"pass it as files_cursor for the next page of files"`
	Diff            string               `json:"diff,omitempty" jsonschema:"the unified diff, from diff_offset, at most the connector's limit"`
	DiffBytes       int                  `json:"diff_bytes" jsonschema:"the whole diff's size"`
	DiffTruncated   bool                 `json:"diff_truncated,omitempty" jsonschema:"the diff goes on: call again with diff_offset = diff_next_offset"`
	DiffNextOffset  int                  `json:"diff_next_offset,omitempty"`
}

// Review is a submitted review of a pull request.
type Review struct {
	ID          int64         `json:"id"`
	Author      *model.Person `json:"author,omitempty"`
	State       string        `json:"state" jsonschema:"APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING"`
	Body        string        `json:"body,omitempty"`
	CommitID    string        `json:"commit_id,omitempty"`
	URL         string        `json:"url,omitempty"`
	SubmittedAt time.Time     `json:"submitted_at,omitzero"`
}

// ReviewComment is a comment on a line of a pull request's diff.
type ReviewComment struct {
	ID        int64         `json:"id"`
	ReviewID  int64         `json:"review_id,omitempty"`
	Author    *model.Person `json:"author,omitempty"`
	Body      string        `json:"body"`
	Path      string        `json:"path"`
	Line      int           `json:"line,omitempty"`
	Side      string        `json:"side,omitempty"`
	InReplyTo int64         `json:"in_reply_to,omitempty"`
	URL       string        `json:"url,omitempty"`
	CreatedAt time.Time     `json:"created_at,omitzero"`
}

// Checks is what CI says of a commit: check runs and commit statuses.
type Checks struct {
	SHA       string     `json:"sha"`
	State     string     `json:"state" jsonschema:"success, failure or pending: failure when any run or status failed, pending when any has not finished"`
	Runs      []CheckRun `json:"check_runs"`
	Statuses  []Status   `json:"statuses"`
	Truncated bool       `json:"truncated,omitempty" jsonschema:"more runs or statuses than the connector reads; state covers those read"`
}

// CheckRun is one check run (GitHub Actions' jobs among them).
type CheckRun struct {
	Name       string `json:"name"`
	Status     string `json:"status" jsonschema:"queued, in_progress, completed"`
	Conclusion string `json:"conclusion,omitempty" jsonschema:"success, failure, neutral, cancelled, skipped, timed_out, action_required"`
	URL        string `json:"url,omitempty"`
}

// Status is one commit status.
type Status struct {
	Context     string `json:"context"`
	State       string `json:"state" jsonschema:"success, failure, error, pending"`
	Description string `json:"description,omitempty"`
	URL         string `json:"url,omitempty"`
}

type listPullsIn struct {
	saas.Page
	Repo      string `json:"repo" jsonschema:"the repository, owner/name or its URL"`
	State     string `json:"state,omitempty" jsonschema:"open (the default), closed or all"`
	Base      string `json:"base,omitempty" jsonschema:"only those into this branch"`
	Head      string `json:"head,omitempty" jsonschema:"only those from this branch, owner:branch"`
	Sort      string `json:"sort,omitempty" jsonschema:"created (the default), updated, popularity, long-running"`
	Direction string `json:"direction,omitempty" jsonschema:"desc (the default) or asc"`
}

type getPullIn struct {
	pullArg
	FilesCursor string `json:"files_cursor,omitempty" jsonschema:"files_next_cursor of the previous call, for the next page of files"`
	DiffOffset  int    `json:"diff_offset,omitempty" jsonschema:"where in the diff to start, in bytes; diff_next_offset of the previous call"`
}

type pullPageIn struct {
	saas.Page
	pullArg
}

type pullIn struct {
	pullArg
}

// List returns the toolset's tools.
func (t Tools) List() []connectors.Tool {
	page := fmt.Sprintf(" A page at a time: limit (default %d, at most %d) and cursor.", ghcore.DefaultPage, ghcore.MaxPage)
	return append([]connectors.Tool{
		connectors.Returning[saas.List[Pull]](connectors.NewTool("list_pulls",
			"List a repository's pull requests: state, base, head (owner:branch), sort."+page, legate.ClassRead, t.list)),
		connectors.Returning[PullDetail](connectors.NewTool("get_pull",
			fmt.Sprintf("Read a pull request with a page of its changed files (files_cursor for more) and its unified diff, at most %d bytes from diff_offset (diff_truncated and diff_next_offset say when it goes on).", MaxDiffBytes),
			legate.ClassRead, t.get)),
		connectors.Returning[saas.List[Review]](connectors.NewTool("list_pull_reviews",
			"List a pull request's reviews: who approved, asked for changes or commented, with their text."+page, legate.ClassRead, t.reviews)),
		connectors.Returning[saas.List[ReviewComment]](connectors.NewTool("list_pull_comments",
			"List a pull request's review comments, on lines of its diff (the conversation's comments: list_issue_comments)."+page, legate.ClassRead, t.comments)),
		connectors.Returning[Checks](connectors.NewTool("get_pull_checks",
			"Did CI pass: the check runs and commit statuses of a pull request's head commit, and one state (success, failure, pending).", legate.ClassRead, t.checks)),
	}, writes{t}.list()...)
}

// pullOf converts a pull request of repo.
func (t Tools) pullOf(call *connectors.Call, repo string, p *github.PullRequest) Pull {
	out := Pull{Object: t.Kit.Object(call, "pull", ghcore.KindPull, ghcore.IssueID(repo, p.GetNumber())),
		Number: p.GetNumber(), Title: p.GetTitle(), Body: ghcore.StripMarker(p.GetBody()), State: p.GetState(), Draft: p.GetDraft(),
		Merged: p.GetMerged() || p.MergedAt != nil, Author: ghcore.Person(p.GetUser()), Head: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(),
		Base: p.GetBase().GetRef(), Mergeable: p.Mergeable, MergeableState: p.GetMergeableState(), Additions: p.GetAdditions(),
		Deletions: p.GetDeletions(), ChangedFiles: p.GetChangedFiles(), MergeCommitSHA: p.GetMergeCommitSHA(),
		CreatedAt: ghcore.UTC(p.CreatedAt), UpdatedAt: ghcore.UTC(p.UpdatedAt), MergedAt: ghcore.UTC(p.MergedAt)}
	if hr := p.GetHead().GetRepo(); hr != nil && !strings.EqualFold(hr.GetFullName(), repo) {
		out.Head = p.GetHead().GetLabel()
	}
	out.URL = p.GetHTMLURL()
	for _, l := range p.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, u := range p.RequestedReviewers {
		out.Reviewers = append(out.Reviewers, u.GetLogin())
	}
	for _, tm := range p.RequestedTeams {
		out.Reviewers = append(out.Reviewers, tm.GetSlug())
	}
	return out
}

func pullText(p Pull) string {
	s := fmt.Sprintf("#%d [%s] %s (%s → %s) %s", p.Number, p.State, p.Title, p.Head, p.Base, p.URL)
	if p.Merged {
		s = strings.Replace(s, "["+p.State+"]", "[merged]", 1)
	}
	return s
}

func (t Tools) list(ctx context.Context, call *connectors.Call, in *listPullsIn) (*legate.Result, error) {
	repo, err := t.ParseRepo(in.Repo)
	if err != nil {
		return nil, err
	}
	if in.State, err = ghcore.OneOf("state", in.State, "open", "closed", "all"); err != nil {
		return nil, err
	}
	if in.Sort, err = ghcore.OneOf("sort", in.Sort, "created", "updated", "popularity", "long-running"); err != nil {
		return nil, err
	}
	if in.Direction, err = ghcore.OneOf("direction", in.Direction, "desc", "asc"); err != nil {
		return nil, err
	}
	owner, name, _ := strings.Cut(repo, "/")
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Pull, *github.Response, error) {
		got, resp, err := api.PullRequests.List(ctx, owner, name, &github.PullRequestListOptions{State: in.State, Base: in.Base, Head: in.Head, Sort: in.Sort, Direction: in.Direction, ListOptions: lo})
		var items []Pull
		for _, p := range got {
			items = append(items, t.pullOf(call, repo, p))
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "pull request(s) in "+repo, pullText), nil
}

func (t Tools) get(ctx context.Context, call *connectors.Call, in *getPullIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	if in.DiffOffset < 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: diff_offset: must not be negative")
	}
	files, err := t.Kit.OpenCursor(call, in.FilesCursor)
	if err != nil {
		return nil, err
	}
	page, err := ghcore.PageNumber(saas.Paging{Token: files})
	if err != nil {
		return nil, err
	}
	repo := owner + "/" + name
	var out PullDetail
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		p, _, err := api.PullRequests.Get(ctx, owner, name, number)
		if err != nil {
			return err
		}
		out = PullDetail{Pull: t.pullOf(call, repo, p), Files: []ghcore.ChangedFile{}}
		got, resp, err := api.PullRequests.ListFiles(ctx, owner, name, number, &github.ListOptions{Page: page, PerPage: ghcore.MaxPage})
		if err != nil {
			return err
		}
		out.Files = ghcore.ChangedFiles(got)
		out.FilesNextCursor = t.Kit.Cursor(call, ghcore.NextToken(resp))
		diff, _, err := api.PullRequests.GetRaw(ctx, owner, name, number, github.RawOptions{Type: github.Diff})
		if err != nil {
			return err
		}
		out.DiffBytes = len(diff)
		out.Diff, out.DiffNextOffset = ghcore.Cut(diff, in.DiffOffset, MaxDiffBytes)
		out.DiffTruncated = out.DiffNextOffset > 0
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(pullText(out.Pull) + "\n\n" + out.Body + "\n\nfiles:")
	for _, f := range out.Files {
		fmt.Fprintf(&b, "\n  %s %s +%d -%d", f.Status, f.Path, f.Additions, f.Deletions)
	}
	if out.FilesNextCursor != "" {
		b.WriteString("\n  more files: pass files_next_cursor as files_cursor")
	}
	b.WriteString("\n\n" + out.Diff)
	if out.DiffTruncated {
		fmt.Fprintf(&b, "\n[diff cut at %d of %d bytes: call again with diff_offset %d]", out.DiffNextOffset, out.DiffBytes, out.DiffNextOffset)
	}
	return &legate.Result{Structured: out, Text: b.String(), Meta: ghcore.AuthorMeta(out.Author)}, nil
}

func reviewOf(r *github.PullRequestReview) Review {
	return Review{ID: r.GetID(), Author: ghcore.Person(r.GetUser()), State: r.GetState(), Body: ghcore.StripMarker(r.GetBody()), CommitID: r.GetCommitID(), URL: r.GetHTMLURL(), SubmittedAt: ghcore.UTC(r.SubmittedAt)}
}

func (t Tools) reviews(ctx context.Context, call *connectors.Call, in *pullPageIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Review, *github.Response, error) {
		got, resp, err := api.PullRequests.ListReviews(ctx, owner, name, number, &lo)
		var items []Review
		for _, r := range got {
			items = append(items, reviewOf(r))
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "review(s)", func(r Review) string { return fmt.Sprintf("%s %s: %s", ghcore.Login(r.Author), r.State, r.Body) }), nil
}

func (t Tools) comments(ctx context.Context, call *connectors.Call, in *pullPageIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]ReviewComment, *github.Response, error) {
		got, resp, err := api.PullRequests.ListComments(ctx, owner, name, number, &github.PullRequestListCommentsOptions{ListOptions: lo})
		var items []ReviewComment
		for _, c := range got {
			items = append(items, ReviewComment{ID: c.GetID(), ReviewID: c.GetPullRequestReviewID(), Author: ghcore.Person(c.GetUser()), Body: c.GetBody(), Path: c.GetPath(),
				Line: c.GetLine(), Side: c.GetSide(), InReplyTo: c.GetInReplyTo(), URL: c.GetHTMLURL(), CreatedAt: ghcore.UTC(c.CreatedAt)})
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "review comment(s)", func(c ReviewComment) string {
		return fmt.Sprintf("%s on %s:%d: %s", ghcore.Login(c.Author), c.Path, c.Line, c.Body)
	}), nil
}

func (t Tools) checks(ctx context.Context, call *connectors.Call, in *pullIn) (*legate.Result, error) {
	owner, name, number, err := t.Numbered(call, "pull", in.arg())
	if err != nil {
		return nil, err
	}
	out := Checks{Runs: []CheckRun{}, Statuses: []Status{}}
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		p, _, err := api.PullRequests.Get(ctx, owner, name, number)
		if err != nil {
			return err
		}
		out = Checks{SHA: p.GetHead().GetSHA(), Runs: []CheckRun{}, Statuses: []Status{}}
		opts := &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}}
		for len(out.Runs) < maxChecks {
			res, resp, err := api.Checks.ListCheckRunsForRef(ctx, owner, name, out.SHA, opts)
			if err != nil {
				return err
			}
			for _, r := range res.CheckRuns {
				out.Runs = append(out.Runs, CheckRun{Name: r.GetName(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), URL: r.GetHTMLURL()})
			}
			if opts.Page = resp.NextPage; opts.Page == 0 {
				break
			}
			out.Truncated = len(out.Runs) >= maxChecks
		}
		lo := &github.ListOptions{PerPage: 100}
		for len(out.Statuses) < maxChecks {
			st, resp, err := api.Repositories.GetCombinedStatus(ctx, owner, name, out.SHA, lo)
			if err != nil {
				return err
			}
			for _, s := range st.Statuses {
				out.Statuses = append(out.Statuses, Status{Context: s.GetContext(), State: s.GetState(), Description: s.GetDescription(), URL: s.GetTargetURL()})
			}
			if lo.Page = resp.NextPage; lo.Page == 0 {
				break
			}
			out.Truncated = out.Truncated || len(out.Statuses) >= maxChecks
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.State = verdict(out)
	var b strings.Builder
	fmt.Fprintf(&b, "checks of %s: %s", out.SHA, out.State)
	for _, r := range out.Runs {
		fmt.Fprintf(&b, "\n  %s: %s %s", r.Name, r.Status, r.Conclusion)
	}
	for _, s := range out.Statuses {
		fmt.Fprintf(&b, "\n  %s: %s %s", s.Context, s.State, s.Description)
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// verdict is one state for the runs and statuses of a commit.
func verdict(c Checks) string {
	pending := false
	for _, r := range c.Runs {
		switch {
		case r.Status != "completed":
			pending = true
		case slices.Contains([]string{"failure", "cancelled", "timed_out", "action_required", "startup_failure"}, r.Conclusion):
			return "failure"
		}
	}
	for _, s := range c.Statuses {
		switch s.State {
		case "failure", "error":
			return "failure"
		case "pending":
			pending = true
		}
	}
	if pending {
		return "pending"
	}
	return "success"
}
