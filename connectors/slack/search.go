package slack

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/slack/workspace"
)

// Page sizes of search_messages and list_unreads, and the most unread
// messages list_unreads counts in one conversation.
const (
	DefaultSearch, MaxSearch         = 20, 100
	DefaultUnreadScan, MaxUnreadScan = 20, 100
	maxUnreadCount                   = 100
)

type searchMessagesIn struct {
	saas.Page
	Query string `json:"query" jsonschema:"Slack's search syntax: words, \"a phrase\", in:#channel, from:@person, has:link, before:2026-01-31, after:, during:"`
	Sort  string `json:"sort,omitempty" jsonschema:"score (best first, the default) or timestamp (newest first)"`
}

// unread is a conversation with messages after its read marker.
type unread struct {
	Channel model.Channel `json:"channel"`
	// Unread is how many messages follow the read marker, at most
	// maxUnreadCount (More then says there are more).
	Unread int  `json:"unread"`
	More   bool `json:"more,omitempty" jsonschema:"there are more unread messages than unread counts"`
	// With names the other person of a DM.
	With string `json:"with,omitempty" jsonschema:"the other person of a DM"`
}

// moreTools are the tools beyond channels and posts.
func (c *Connector) moreTools() []connectors.Tool {
	tools := []connectors.Tool{
		inToolset("search", connectors.Returning[saas.List[model.Message]](connectors.NewTool("search_messages",
			fmt.Sprintf("Search the workspace's messages with Slack's query syntax (words, \"phrases\", in:#channel, from:@person, has:link, before:/after:/during: dates), as the person whose user token the call has (Slack serves search to user tokens only): messages (message.v1, each with its author's name and permalink), a page at a time: limit (default %d, at most %d) and cursor.", DefaultSearch, MaxSearch),
			legate.ClassRead, c.searchMessages))),
	}
	tools = append(tools, c.userTools()...)
	tools = append(tools, c.writeTools()...)
	return append(tools, c.fileTools()...)
}

func (c *Connector) searchMessages(ctx context.Context, call *connectors.Call, in *searchMessagesIn) (*legate.Result, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: query: must not be empty")
	}
	sort := in.Sort
	switch sort {
	case "", "score", "timestamp":
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: sort: score or timestamp, got %q", in.Sort)
	}
	if err := needUserToken(call, "search_messages"); err != nil {
		return nil, err
	}
	p, err := c.kit.Open(call, in.Page, DefaultSearch, MaxSearch)
	if err != nil {
		return nil, err
	}
	page := 1
	if p.Token != "" {
		page, _ = strconv.Atoi(p.Token)
	}
	var out saas.List[model.Message]
	total := 0
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		res, err := c.client(token).SearchMessagesContext(ctx, in.Query, slack.SearchParameters{Sort: sort, SortDirection: "desc", Count: p.Size, Page: page})
		if err != nil {
			return mapError(ctx, err)
		}
		ids := make([]string, len(res.Matches))
		for i, m := range res.Matches {
			ids[i] = m.User
		}
		who := c.dir.Names(ctx, c.client(token), ids)
		items := make([]model.Message, 0, len(res.Matches))
		for _, sm := range res.Matches {
			m, err := c.messageOf(call, sm.Channel.ID, slack.Message{Msg: slack.Msg{Timestamp: sm.Timestamp, User: sm.User, Username: sm.Username, Text: sm.Text}}, who)
			if err != nil {
				return err
			}
			m.URL = sm.Permalink
			if sm.Channel.Name != "" {
				m.ProviderMetadata["channel_name"] = sm.Channel.Name
			}
			items = append(items, m)
		}
		next := ""
		if res.Paging.Pages > page {
			next = strconv.Itoa(page + 1)
		}
		total = res.Total
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d match(es) for %q", len(out.Items), total, in.Query)
	for _, m := range out.Items {
		who := ""
		if m.Sender != nil {
			who = m.Sender.Name
		}
		fmt.Fprintf(&b, "\n[%s] #%v %s: %s", m.SentAt.Format("2006-01-02 15:04"), m.ProviderMetadata["channel_name"], who, m.Text)
	}
	return &legate.Result{Structured: out, Text: more(&b, out.NextCursor)}, nil
}

func (c *Connector) listUnreads(ctx context.Context, call *connectors.Call, in *saas.Page) (*legate.Result, error) {
	p, err := c.kit.Open(call, *in, DefaultUnreadScan, MaxUnreadScan)
	if err != nil {
		return nil, err
	}
	var out saas.List[unread]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api := c.client(token)
		chans, next, err := api.GetConversationsForUserContext(ctx, &slack.GetConversationsForUserParameters{
			Cursor: p.Token, Limit: p.Size, Types: []string{"public_channel", "private_channel", "mpim", "im"}, ExcludeArchived: true})
		if err != nil {
			return mapError(ctx, err)
		}
		var items []unread
		for _, ch := range chans {
			u, err := c.unreadOf(ctx, call, token, ch.ID)
			if err != nil {
				return err
			}
			if u != nil {
				items = append(items, *u)
			}
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d conversation(s) with unread messages", len(out.Items))
	for _, u := range out.Items {
		n := strconv.Itoa(u.Unread)
		if u.More {
			n += "+"
		}
		fmt.Fprintf(&b, "\n%s: %s unread", u.Channel.Name, n)
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore conversations to check: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// unreadOf returns the unread state of the conversation id, nil when
// nothing follows its read marker or Slack gives none: conversations.info gives last_read
// and the latest message (and, to a user token, unread_count_display);
// without a count, conversations.history since last_read counts them.
func (c *Connector) unreadOf(ctx context.Context, call *connectors.Call, token, id string) (*unread, error) {
	api := c.client(token)
	ch, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: id})
	if err != nil {
		return nil, mapError(ctx, err)
	}
	if ch.LastRead == "" { // no read marker (a bot's channel): nothing to tell
		return nil, nil
	}
	if ch.Latest == nil || ch.Latest.Timestamp == "" || !tsTime(ch.Latest.Timestamp).After(tsTime(ch.LastRead)) {
		return nil, nil
	}
	u := &unread{Unread: ch.UnreadCountDisplay}
	if u.Unread == 0 {
		resp, err := c.reads(token).GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: id, Oldest: ch.LastRead, Limit: maxUnreadCount})
		if err != nil {
			return nil, mapError(ctx, err)
		}
		u.Unread, u.More = len(resp.Messages), resp.HasMore
	}
	if ch.IsIM && ch.User != "" {
		if p, err := c.dir.User(ctx, api, ch.User); err == nil {
			u.With = workspace.DisplayName(p)
			ch.Name = "@" + p.Name
		}
	}
	if u.Channel, err = c.channelOf(call, *ch); err != nil {
		return nil, err
	}
	return u, nil
}
