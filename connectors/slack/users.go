package slack

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/slack/workspace"
)

// Page sizes of list_users, and the most matches find_user returns.
const (
	DefaultUsers, MaxUsers = 100, 200
	maxFound               = 20
)

// UserV1 is the contract of a Slack user in results.
const UserV1 = "slack_user.v1"

// kindUser is the kind of a user's ref.
const kindUser = "user"

// User is a person (or bot) of the workspace.
type User struct {
	model.Object
	Handle      string `json:"handle" jsonschema:"the @handle"`
	DisplayName string `json:"display_name,omitempty"`
	RealName    string `json:"real_name,omitempty"`
	Email       string `json:"email,omitempty" jsonschema:"when the token has users:read.email"`
	Title       string `json:"title,omitempty"`
	TimeZone    string `json:"time_zone,omitempty"`
	Bot         bool   `json:"bot,omitempty"`
	Deleted     bool   `json:"deleted,omitempty"`
}

type findUserIn struct {
	Query string `json:"query" jsonschema:"who: a name, display name or @handle (matched in the cached directory), an e-mail (users.lookupByEmail) or a user id (U…)"`
}

type openDMIn struct {
	User string `json:"user" jsonschema:"the person: @handle or name, e-mail or user id (U…)"`
}

// dmOut is an open DM.
type dmOut struct {
	Channel model.Channel `json:"channel"`
	User    User          `json:"user"`
}

func (c *Connector) userTools() []connectors.Tool {
	return []connectors.Tool{
		inToolset("users", connectors.Returning[saas.List[User]](connectors.NewTool("list_users",
			fmt.Sprintf("List the workspace's people and bots (%s), a page at a time: limit (default %d, at most %d) and cursor.", UserV1, DefaultUsers, MaxUsers),
			legate.ClassRead, c.listUsers))),
		inToolset("users", connectors.Returning[saas.List[User]](connectors.NewTool("find_user",
			fmt.Sprintf("Who is someone: find users (%s) by name, display name or @handle (in the workspace's directory, cached %s), by e-mail or by user id; the exact matches, else the partial ones, at most %d.", UserV1, workspace.ListTTL, maxFound),
			legate.ClassRead, c.findUser))),
		inToolset("users", connectors.Returning[dmOut](connectors.NewTool("open_dm",
			"Open (or find) the DM with a person (conversations.open) and return its channel, which read_history and post_message take. It reads: opening a DM posts nothing and tells nobody; the DM exists for Slack once opened, as when anyone opens it in Slack's own app.",
			legate.ClassRead, c.openDMTool))),
	}
}

// userOf converts a Slack user.
func (c *Connector) userOf(call *connectors.Call, u slack.User) User {
	return User{Object: c.kit.Object(call, UserV1, kindUser, u.ID), Handle: u.Name, DisplayName: u.Profile.DisplayName, RealName: u.RealName,
		Email: u.Profile.Email, Title: u.Profile.Title, TimeZone: u.TZ, Bot: u.IsBot, Deleted: u.Deleted}
}

func (c *Connector) listUsers(ctx context.Context, call *connectors.Call, in *saas.Page) (*legate.Result, error) {
	p, err := c.kit.Open(call, *in, DefaultUsers, MaxUsers)
	if err != nil {
		return nil, err
	}
	var out saas.List[User]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		pg := c.client(token).GetUsersPaginated(slack.GetUsersOptionLimit(p.Size))
		pg.Cursor = p.Token
		pg, err := pg.Next(ctx)
		if err != nil {
			return mapError(ctx, err)
		}
		items := make([]User, 0, len(pg.Users))
		for _, u := range pg.Users {
			c.dir.Remember(u)
			items = append(items, c.userOf(call, u))
		}
		out = saas.ListOf(c.kit, call, items, pg.Cursor)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: usersText(out)}, nil
}

func usersText(out saas.List[User]) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d user(s)", len(out.Items))
	for _, u := range out.Items {
		fmt.Fprintf(&b, "\n@%s (%s) %s", u.Handle, u.ExternalID, u.RealName)
		if u.Email != "" {
			fmt.Fprintf(&b, " <%s>", u.Email)
		}
	}
	return more(&b, out.NextCursor)
}

func (c *Connector) findUser(ctx context.Context, call *connectors.Call, in *findUserIn) (*legate.Result, error) {
	q := strings.TrimSpace(in.Query)
	if strings.TrimPrefix(q, "@") == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: query: must name someone")
	}
	var found []slack.User
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api := c.client(token)
		if workspace.UserID.MatchString(q) || strings.Contains(strings.TrimPrefix(q, "@"), "@") {
			u, err := c.dir.Person(ctx, api, q)
			found = []slack.User{u}
			return mapError(ctx, err)
		}
		var err error
		found, _, err = c.dir.Find(ctx, api, q)
		return mapError(ctx, err)
	})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, legate.Errorf(legate.CodeNotFound, "slack: nobody matches %q: try part of the name, the e-mail, or list_users", q)
	}
	found = found[:min(len(found), maxFound)]
	out := saas.List[User]{Items: make([]User, 0, len(found))}
	for _, u := range found {
		out.Items = append(out.Items, c.userOf(call, u))
	}
	return &legate.Result{Structured: out, Text: usersText(out)}, nil
}

func (c *Connector) openDMTool(ctx context.Context, call *connectors.Call, in *openDMIn) (*legate.Result, error) {
	var out dmOut
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api := c.client(token)
		u, err := c.dir.Person(ctx, api, in.User)
		if err != nil {
			return mapError(ctx, err)
		}
		id, err := workspace.OpenDM(ctx, api, u.ID)
		if err != nil {
			return mapError(ctx, err)
		}
		out.User = c.userOf(call, u)
		ch := slack.Channel{}
		ch.ID, ch.Name, ch.IsIM, ch.User = id, "@"+u.Name, true, u.ID
		out.Channel, err = c.channelOf(call, ch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("DM with @%s (%s): channel %s", out.User.Handle, out.User.RealName, out.Channel.Ref)}, nil
}
