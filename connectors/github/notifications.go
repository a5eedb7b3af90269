package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/connectors/saas"
)

// notifications are the tools of the notifications toolset.
type notifications struct{ *ghcore.Core }

// Notification is one of the token's account's notifications.
type Notification struct {
	ID        string    `json:"id"`
	Repo      string    `json:"repo" jsonschema:"owner/name"`
	Title     string    `json:"title"`
	Type      string    `json:"type" jsonschema:"Issue, PullRequest, Release, CheckSuite, Discussion, ..."`
	Subject   string    `json:"subject,omitempty" jsonschema:"an issue's or pull request's id, owner/name#123: pass it as issue or pull"`
	Reason    string    `json:"reason" jsonschema:"why it came: review_requested, mention, assign, author, comment, ci_activity, ..."`
	Unread    bool      `json:"unread"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

type listNotificationsIn struct {
	saas.Page
	All           bool      `json:"all,omitempty" jsonschema:"read ones too (unread only when false)"`
	Participating bool      `json:"participating,omitempty" jsonschema:"only those where the account takes part or is mentioned"`
	Since         time.Time `json:"since,omitzero" jsonschema:"only those updated after this time (RFC 3339)"`
}

func (t notifications) tools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[saas.List[Notification]](connectors.NewTool("list_notifications",
			fmt.Sprintf("What needs my attention: the token's account's notifications (review requests, mentions, assignments, CI), unread ones unless all, newest first; within `repositories` when set. A page at a time: limit (default %d, at most %d) and cursor.", ghcore.DefaultPage, ghcore.MaxPage),
			legate.ClassRead, t.list)),
	}
}

func (t notifications) list(ctx context.Context, call *connectors.Call, in *listNotificationsIn) (*legate.Result, error) {
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Notification, *github.Response, error) {
		got, resp, err := api.Activity.ListNotifications(ctx, &github.NotificationListOptions{All: in.All, Participating: in.Participating, Since: in.Since, ListOptions: lo})
		var items []Notification
		for _, n := range got {
			repo := n.GetRepository().GetFullName()
			if !t.Allowed(repo) {
				continue
			}
			it := Notification{ID: n.GetID(), Repo: repo, Title: n.GetSubject().GetTitle(), Type: n.GetSubject().GetType(), Reason: n.GetReason(),
				Unread: n.GetUnread(), UpdatedAt: ghcore.UTC(n.UpdatedAt)}
			// The subject's API URL ends in /issues/123 or /pulls/123.
			if u := n.GetSubject().GetURL(); it.Type == "Issue" || it.Type == "PullRequest" {
				if i := strings.LastIndexByte(u, '/'); i > 0 {
					it.Subject = repo + "#" + u[i+1:]
				}
			}
			items = append(items, it)
		}
		return items, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "notification(s)", func(n Notification) string {
		return fmt.Sprintf("%s %s [%s] %s %s", n.Repo, n.Type, n.Reason, n.Title, n.Subject)
	}), nil
}
