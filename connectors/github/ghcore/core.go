package ghcore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// MapError makes an error of go-github canonical. ctx is the attempt's.
func MapError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if le, ok := err.(*legate.Error); ok {
		return le // canonical already
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

// RepoPattern returns the pattern of an owner/name, compiled at its
// first use (its counted repetitions compile to 40 KB).
var RepoPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
})

// repo checks an owner/name against the pattern and the allow-list and
// returns its parts.
func (c *Core) repo(arg string) (owner, name string, err error) {
	if !RepoPattern().MatchString(arg) {
		return "", "", legate.Errorf(legate.CodeInvalidArgument, "github: repo: must be owner/name or the repository's URL, got %q", arg)
	}
	if len(c.repos) > 0 && !slices.Contains(c.repos, strings.ToLower(arg)) {
		return "", "", legate.Errorf(legate.CodePermissionDenied, "github: repository %s is not among this connector's repositories; use one of %s or ask the operator to add it", arg, strings.Join(c.Repositories, ", "))
	}
	owner, name, _ = strings.Cut(arg, "/")
	return owner, name, nil
}

// IssueOf converts an issue of repo to issue.v1.
func (c *Core) IssueOf(call *connectors.Call, repo string, is *github.Issue) (model.Issue, error) {
	if is == nil || is.Number == nil || is.Title == nil {
		return model.Issue{}, saas.Mapping("github", "an issue without a number or a title")
	}
	out := model.Issue{
		Object:   c.Kit.Object(call, model.IssueV1, KindIssue, IssueID(repo, is.GetNumber())),
		Number:   is.GetNumber(),
		Title:    is.GetTitle(),
		Body:     StripMarker(is.GetBody()),
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

// CommentOf converts a comment on issue (owner/name#n) to message.v1.
func (c *Core) CommentOf(call *connectors.Call, issue string, cm *github.IssueComment) (model.Message, error) {
	if cm == nil || cm.ID == nil {
		return model.Message{}, saas.Mapping("github", "a comment without an id")
	}
	out := model.Message{
		Object:    c.Kit.Object(call, model.MessageV1, kindComment, issue+"/"+strconv.FormatInt(cm.GetID(), 10)),
		ThreadRef: c.Kit.Ref(call, KindIssue, issue),
		Text:      StripMarker(cm.GetBody()),
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

// StripMarker removes the marker from a body shown to the client.
func StripMarker(body string) string {
	i := strings.LastIndex(body, markerPrefix[2:])
	if i < 0 || !strings.HasSuffix(strings.TrimRight(body, "\r\n "), " -->") {
		return body
	}
	return strings.TrimRight(body[:i], "\r\n ")
}

// FindIn walks up to findPages pages of a listing read looking for a lost
// write and returns the first item that match accepts, nil if none.
func FindIn[T any](list func(page int) ([]T, *github.Response, error), match func(T) bool) (T, error) {
	var zero T
	page := 0
	for range findPages {
		items, resp, err := list(page)
		if err != nil {
			return zero, err
		}
		if i := slices.IndexFunc(items, match); i >= 0 {
			return items[i], nil
		}
		if resp.NextPage == 0 {
			return zero, nil
		}
		page = resp.NextPage
	}
	return zero, lostTrack()
}

// FindLatest is FindIn for a listing GitHub gives oldest first and
// cannot limit to a time (a pull request's reviews): it reads the last
// findPages pages, from the last (the Link header's), newest first.
func FindLatest[T any](list func(page int) ([]T, *github.Response, error), match func(T) bool) (T, error) {
	var zero T
	items, resp, err := list(1)
	if err != nil {
		return zero, err
	}
	last := max(resp.LastPage, 1)
	if last > 1 {
		items, _, err = list(last)
	}
	for page := last; ; {
		if err != nil {
			return zero, err
		}
		for _, it := range slices.Backward(items) {
			if match(it) {
				return it, nil
			}
		}
		if page--; page < 1 {
			return zero, nil
		}
		if page <= last-findPages {
			return zero, lostTrack()
		}
		items, _, err = list(page)
	}
}

// findPages bounds the listing read looking for a lost write.
const findPages = 5

func lostTrack() error {
	return legate.Errorf(legate.CodeConflict, "github: cannot tell whether an earlier attempt wrote: more than %d pages changed since; check the repository", findPages)
}

// Mark is body as sent: with the marker at its end when markers are on.
func (c *Core) Mark(body, marker string) string {
	if c.Kit.Markers() {
		return withMarker(body, marker)
	}
	return body
}

// Same reports whether text found on GitHub is what a write sent: by
// marker when markers are on, else by content (GitHub keeps the text as
// sent, line ends aside).
func (c *Core) Same(found, sent, marker string) bool {
	if c.Kit.Markers() {
		return hasMarker(found, marker)
	}
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(found) == norm(sent)
}

// Recent reports whether t is since or after since.
func Recent(t github.Timestamp, since time.Time) bool { return !t.Before(since) }

// WriteOnce runs a write through saas.WriteOnce. find gets who, the login of the token's account (asked once
// per instance), to match what that account wrote.
func WriteOnce[T any](ctx context.Context, c *Core, call *connectors.Call,
	send func(ctx context.Context, api *github.Client, marker string) (*T, error),
	find func(ctx context.Context, api *github.Client, who func() (string, error), marker string, since time.Time) (*T, error)) (*T, error) {
	return saas.WriteOnce(ctx, c.Kit, call, saas.Write[T]{
		Send: func(ctx context.Context, token, marker string) (*T, error) {
			ctx, api, err := c.Client(ctx, token)
			if err != nil {
				return nil, err
			}
			out, err := send(ctx, api, marker)
			return out, MapError(ctx, err)
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*T, error) {
			ctx, api, err := c.Client(ctx, token)
			if err != nil {
				return nil, err
			}
			who := func() (string, error) { return c.Self(ctx, api, token) }
			out, err := find(ctx, api, who, marker, since)
			return out, MapError(ctx, err)
		},
	})
}

// Unsure marks the failure of a read that follows a write GitHub did: the
// call is retried as one whose write may have happened, so that the next
// attempt finds it instead of writing again.
func Unsure(ctx context.Context, err error) error {
	le := saas.Classify(ctx, MapError(ctx, err), "github")
	return &legate.Error{Code: legate.CodeTransient, RetryAfter: le.RetryAfter, Message: "github: written, but reading it back failed: " + le.Message, Err: err}
}

// PageNumber is GitHub's page number a page token holds, 0 for the first.
func PageNumber(p saas.Paging) (int, error) {
	if p.Token == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(p.Token)
	if err != nil || n < 1 {
		return 0, saas.Mapping("github", "a page token that is not a page number")
	}
	return n, nil
}

// NextToken is the page token of the page after resp, "" on the last.
func NextToken(resp *github.Response) string {
	if resp == nil || resp.NextPage == 0 {
		return ""
	}
	return strconv.Itoa(resp.NextPage)
}

// ListPage reads one page of a list tool: the limit and cursor of in
// (default def, at most max), fetch's items and the cursor of the next page.
func ListPage[T any](ctx context.Context, c *Core, call *connectors.Call, in saas.Page, def, maxSize int,
	fetch func(ctx context.Context, api *github.Client, opts github.ListOptions) ([]T, *github.Response, error)) (saas.List[T], error) {
	var out saas.List[T]
	p, err := c.Kit.Open(call, in, def, maxSize)
	if err != nil {
		return out, err
	}
	page, err := PageNumber(p)
	if err != nil {
		return out, err
	}
	err = c.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		items, resp, err := fetch(ctx, api, github.ListOptions{Page: page, PerPage: p.Size})
		if err == nil {
			out = saas.ListOf(c.Kit, call, items, NextToken(resp))
		}
		return err
	})
	return out, err
}

// ListResult is a list's result: its items, one line each, and how to go on.
func ListResult[T any](l saas.List[T], what string, line func(T) string) *legate.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", len(l.Items), what)
	for _, it := range l.Items {
		b.WriteString("\n" + line(it))
	}
	if l.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: l, Text: b.String()}
}

// Person is a GitHub user as model.Person.
func Person(u *github.User) *model.Person {
	if u == nil {
		return nil
	}
	return &model.Person{ID: strconv.FormatInt(u.GetID(), 10), Name: u.GetLogin()}
}

// Login is a person's login for a text, "ghost" for a deleted account
// (GitHub's own name for one) or none.
func Login(p *model.Person) string {
	if p == nil || p.Name == "" {
		return "ghost"
	}
	return p.Name
}

// AuthorMeta is the result _meta naming p, by login, as the author of what
// a single-object read returns (provenance.Author); nil for none.
func AuthorMeta(p *model.Person) map[string]any {
	if p == nil {
		return nil
	}
	return provenance.Author(p.Name)
}

// UTC is a GitHub time in UTC, zero when absent.
func UTC(t *github.Timestamp) time.Time {
	if t == nil || t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
