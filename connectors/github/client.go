package github

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// mapError makes an error of go-github canonical. ctx is the attempt's.
func mapError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var er *github.ErrorResponse
	var accepted *github.AcceptedError
	switch {
	case errors.As(err, &rl):
		return saas.RateLimited("github", max(time.Until(rl.Rate.Reset.Time), 0))
	case errors.As(err, &abuse):
		return saas.RateLimited("github", abuse.GetRetryAfter())
	case errors.As(err, &er) && er.Response != nil:
		msg := "GitHub answered " + strconv.Itoa(er.Response.StatusCode)
		if er.Message != "" {
			msg += ": " + er.Message
		}
		var wait time.Duration
		if er.Response.StatusCode == 429 {
			wait, _ = netguard.RetryAfter(er.Response.Header, time.Now())
		}
		return saas.StatusError("github", er.Response.StatusCode, wait, msg)
	case errors.As(err, &accepted):
		return &legate.Error{Code: legate.CodeTransient, Message: "github: the answer is being prepared; try again"}
	}
	return saas.Classify(ctx, err, "github")
}

// The kinds of the refs the connector hands out.
const (
	kindIssue   = "issue"
	kindComment = "comment"
)

// issueID is the provider id of an issue: owner/name#number.
func issueID(repo string, number int) string { return repo + "#" + strconv.Itoa(number) }

func splitIssueID(id string) (owner, name string, number int, ok bool) {
	repo, num, found := strings.Cut(id, "#")
	owner, name, slash := strings.Cut(repo, "/")
	n, err := strconv.Atoi(num)
	return owner, name, n, found && slash && err == nil && n > 0
}

// repo checks an owner/name argument against the pattern and the
// allow-list and returns its parts.
func (c *Connector) repo(arg string) (owner, name string, err error) {
	if !repoPattern.MatchString(arg) {
		return "", "", legate.Errorf(legate.CodeInvalidArgument, "github: repo: must be owner/name, got %q", arg)
	}
	if len(c.repos) > 0 && !slices.Contains(c.repos, strings.ToLower(arg)) {
		return "", "", legate.Errorf(legate.CodePermissionDenied, "github: repository %s is not among this connector's repositories", arg)
	}
	owner, name, _ = strings.Cut(arg, "/")
	return owner, name, nil
}

// issueOf converts an issue of repo to issue.v1.
func (c *Connector) issueOf(call *connectors.Call, repo string, is *github.Issue) (model.Issue, error) {
	if is == nil || is.Number == nil || is.Title == nil {
		return model.Issue{}, saas.Mapping("github", "an issue without a number or a title")
	}
	out := model.Issue{
		Object:   c.kit.Object(call, model.IssueV1, kindIssue, issueID(repo, is.GetNumber())),
		Number:   is.GetNumber(),
		Title:    is.GetTitle(),
		Body:     stripMarker(is.GetBody()),
		State:    is.GetState(),
		Comments: is.GetComments(),
	}
	out.URL = is.GetHTMLURL()
	if u := is.GetUser(); u != nil {
		out.Author = &model.Person{ID: strconv.FormatInt(u.GetID(), 10), Name: u.GetLogin()}
	}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	if t := is.GetCreatedAt(); !t.IsZero() {
		out.CreatedAt = t.UTC()
	}
	if t := is.GetUpdatedAt(); !t.IsZero() {
		out.UpdatedAt = t.UTC()
	}
	meta := map[string]any{"repository": repo, "id": is.GetID()}
	if is.GetLocked() {
		meta["locked"] = true
	}
	if r := is.GetStateReason(); r != "" {
		meta["state_reason"] = r
	}
	if is.Milestone != nil {
		meta["milestone"] = is.Milestone.GetTitle()
	}
	out.ProviderMetadata = meta
	return out, nil
}

// commentOf converts a comment on issue (owner/name#n) to message.v1.
func (c *Connector) commentOf(call *connectors.Call, issue string, cm *github.IssueComment) (model.Message, error) {
	if cm == nil || cm.ID == nil {
		return model.Message{}, saas.Mapping("github", "a comment without an id")
	}
	out := model.Message{
		Object:    c.kit.Object(call, model.MessageV1, kindComment, issue+"/"+strconv.FormatInt(cm.GetID(), 10)),
		ThreadRef: c.kit.Ref(call, kindIssue, issue),
		Text:      stripMarker(cm.GetBody()),
	}
	out.URL = cm.GetHTMLURL()
	if u := cm.GetUser(); u != nil {
		out.Sender = &model.Person{ID: strconv.FormatInt(u.GetID(), 10), Name: u.GetLogin()}
	}
	if t := cm.GetCreatedAt(); !t.IsZero() {
		out.SentAt = t.UTC()
	}
	out.ProviderMetadata = map[string]any{"id": cm.GetID()}
	return out, nil
}

// The marker a created issue or comment carries at the end of its body:
// an HTML comment, which GitHub does not show.
const markerPrefix = "\n\n<!-- legate-operation: "

func withMarker(body, marker string) string { return body + markerPrefix + marker + " -->" }

func hasMarker(body, marker string) bool {
	return strings.HasSuffix(strings.TrimRight(body, "\r\n "), markerPrefix[2:]+marker+" -->")
}

// stripMarker removes the marker from a body shown to the client.
func stripMarker(body string) string {
	i := strings.LastIndex(body, markerPrefix[2:])
	if i < 0 || !strings.HasSuffix(strings.TrimRight(body, "\r\n "), " -->") {
		return body
	}
	return strings.TrimRight(body[:i], "\r\n ")
}

// findPages bounds the listing read looking for a lost write.
const findPages = 5

// findIssue looks for the issue with marker in owner/name, updated since since.
func (c *Connector) findIssue(ctx context.Context, token, owner, name, marker string, since time.Time) (*github.Issue, error) {
	api, err := c.client(token)
	if err != nil {
		return nil, err
	}
	opts := &github.IssueListByRepoOptions{State: "all", Sort: "created", Direction: "desc", Since: since, ListOptions: github.ListOptions{PerPage: 100}}
	for range findPages {
		issues, resp, err := api.Issues.ListByRepo(ctx, owner, name, opts)
		if err != nil {
			return nil, mapError(ctx, err)
		}
		if i := slices.IndexFunc(issues, func(is *github.Issue) bool { return hasMarker(is.GetBody(), marker) }); i >= 0 {
			return issues[i], nil
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.ListOptions.Page = resp.NextPage
	}
	return nil, lostTrack()
}

// findComment looks for the comment with marker on issue number, since since.
func (c *Connector) findComment(ctx context.Context, token, owner, name string, number int, marker string, since time.Time) (*github.IssueComment, error) {
	api, err := c.client(token)
	if err != nil {
		return nil, err
	}
	opts := &github.IssueListCommentsOptions{Since: &since, ListOptions: github.ListOptions{PerPage: 100}}
	for range findPages {
		comments, resp, err := api.Issues.ListComments(ctx, owner, name, number, opts)
		if err != nil {
			return nil, mapError(ctx, err)
		}
		if i := slices.IndexFunc(comments, func(cm *github.IssueComment) bool { return hasMarker(cm.GetBody(), marker) }); i >= 0 {
			return comments[i], nil
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, lostTrack()
}

func lostTrack() error {
	return legate.Errorf(legate.CodeConflict, "github: cannot tell whether an earlier attempt wrote: more than %d pages changed since; check the repository", findPages)
}

func itoa(i int) string { return fmt.Sprint(i) }
