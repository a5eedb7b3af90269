package slack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/slack/webapi"
)

type listChannelsIn struct {
	saas.Page
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema:"list archived channels too"`
}

type readHistoryIn struct {
	saas.Page
	Channel string `json:"channel" jsonschema:"the channel: a ref from list_channels, an id (C…, G…, D…), #name, or a person (@handle, U…, e-mail) for your DM with them"`
	Thread  string `json:"thread,omitempty" jsonschema:"a message that starts a thread (its ref or permalink): read the thread's replies instead of the channel"`
}

type readThreadIn struct {
	saas.Page
	Thread string `json:"thread" jsonschema:"any message of the thread: its ref (from read_history, search_messages) or its permalink"`
}

type postMessageIn struct {
	Channel string `json:"channel" jsonschema:"where to post: a channel ref, an id (C…, G…, D…), #name, or a person (@handle, U…, e-mail) to DM"`
	Text    string `json:"text" jsonschema:"the message, in Slack mrkdwn"`
}

type replyThreadIn struct {
	Thread    string `json:"thread" jsonschema:"the message to reply to: its ref (from read_history, search_messages, post_message) or its permalink"`
	Text      string `json:"text" jsonschema:"the reply, in Slack mrkdwn"`
	Broadcast bool   `json:"broadcast,omitempty" jsonschema:"also post the reply to the channel"`
}

// inToolset puts t in toolset set.
func inToolset(set string, t connectors.Tool) connectors.Tool {
	t.Toolset = set
	return t
}

// writes ends a write tool's description with what holds on a retry.
func writes(desc string) string { return desc + " " + saas.OnceNote }

func (c *Connector) newTools() []connectors.Tool {
	tools := []connectors.Tool{
		inToolset("channels", connectors.Returning[saas.List[model.Channel]](connectors.NewTool("list_channels",
			fmt.Sprintf("List the workspace's channels (channel.v1), a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page). Each channel's ref is what read_history and post_message take; they take #name too.", DefaultChannels, MaxChannels),
			legate.ClassRead, c.listChannels))),
		inToolset("channels", connectors.Returning[saas.List[model.Message]](connectors.NewTool("read_history",
			fmt.Sprintf("Read a channel's or a DM's messages (message.v1, each naming its author), newest first, or a thread's replies, oldest first, a page at a time: limit (default %d, at most %d) and cursor.", DefaultMessages, MaxMessages),
			legate.ClassRead, c.readHistory))),
		inToolset("channels", connectors.Returning[saas.List[model.Message]](connectors.NewTool("read_thread",
			fmt.Sprintf("Read a whole thread (message.v1, each naming its author), its first message then the replies, oldest first, given any of its messages by ref or permalink: limit (default %d, at most %d) and cursor.", DefaultMessages, MaxMessages),
			legate.ClassRead, c.readThread))),
		inToolset("channels", connectors.Returning[saas.List[unread]](connectors.NewTool("list_unreads",
			fmt.Sprintf("What did I miss: the channels, DMs and group DMs the token's account is in that have messages after its read marker, with how many (conversations.info's last_read against its latest message; counted up to %d), a page of conversations at a time: limit (default %d, at most %d) and cursor. Slack keeps read markers for people: a conversation without one (most of a bot's) is left out.", maxUnreadCount, DefaultUnreadScan, MaxUnreadScan),
			legate.ClassRead, c.listUnreads))),
		inToolset("messages", connectors.Returning[model.Message](connectors.NewTool("post_message",
			writes("Post a message to a channel, or to a person's DM (channel @handle, U… or e-mail), as the token's account (the person's with a user token, else the bot); returns the message (message.v1)."),
			legate.ClassWrite, c.postMessage))),
		inToolset("messages", connectors.Returning[model.Message](connectors.NewTool("reply_thread",
			writes("Reply in the thread of a message (ref or permalink) as the token's account; returns the reply (message.v1)."),
			legate.ClassWrite, c.replyThread))),
	}
	tools = append(tools, c.moreTools()...)
	return wrapTools(tools)
}

func (c *Connector) listChannels(ctx context.Context, call *connectors.Call, in *listChannelsIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultChannels, MaxChannels)
	if err != nil {
		return nil, err
	}
	var out saas.List[model.Channel]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		chans, next, err := c.reads(token).GetConversationsContext(ctx, &slack.GetConversationsParameters{
			Cursor: p.Token, Limit: p.Size, Types: c.channelTypes(), ExcludeArchived: !in.IncludeArchived})
		if err != nil {
			return mapError(ctx, err)
		}
		items, err := saas.Convert(chans, func(ch slack.Channel) (model.Channel, error) { return c.channelOf(call, ch) })
		if err != nil {
			return err
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d channel(s)", len(out.Items))
	for _, ch := range out.Items {
		fmt.Fprintf(&b, "\n#%s", ch.Name)
		if ch.Topic != "" {
			fmt.Fprintf(&b, " — %s", ch.Topic)
		}
	}
	return &legate.Result{Structured: out, Text: more(&b, out.NextCursor)}, nil
}

// more ends a list's text with how to get the next page.
func more(b *strings.Builder, next string) string {
	if next != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return b.String()
}

func (c *Connector) readHistory(ctx context.Context, call *connectors.Call, in *readHistoryIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultMessages, MaxMessages)
	if err != nil {
		return nil, err
	}
	threadCh, threadTS := "", ""
	if in.Thread != "" {
		id, err := c.message(call, in.Thread)
		if err != nil {
			return nil, err
		}
		threadCh, threadTS = splitMessageID(id)
	}
	var out saas.List[model.Message]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		channel, err := c.channel(ctx, call, token, in.Channel)
		if err != nil {
			return err
		}
		if threadTS != "" && threadCh != channel {
			return legate.Errorf(legate.CodeInvalidArgument, "slack: thread: the message is not in that channel; read_thread takes the message alone")
		}
		out, err = c.page(ctx, call, token, channel, threadTS, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: messagesText(out)}, nil
}

func (c *Connector) readThread(ctx context.Context, call *connectors.Call, in *readThreadIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultMessages, MaxMessages)
	if err != nil {
		return nil, err
	}
	id, err := c.message(call, in.Thread)
	if err != nil {
		return nil, err
	}
	channel, ts := splitMessageID(id)
	var out saas.List[model.Message]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		out, err = c.page(ctx, call, token, channel, ts, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: messagesText(out)}, nil
}

// page reads one page of channel's history, or of the thread of
// threadTS.
func (c *Connector) page(ctx context.Context, call *connectors.Call, token, channel, threadTS string, p saas.Paging) (saas.List[model.Message], error) {
	api := c.reads(token)
	var msgs []slack.Message
	var next string
	if threadTS == "" {
		resp, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: channel, Cursor: p.Token, Limit: p.Size})
		if err != nil {
			return saas.List[model.Message]{}, mapError(ctx, err)
		}
		msgs, next = resp.Messages, resp.ResponseMetaData.NextCursor
	} else {
		var err error
		msgs, _, next, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: threadTS, Cursor: p.Token, Limit: p.Size})
		if err != nil {
			return saas.List[model.Message]{}, mapError(ctx, err)
		}
	}
	items, err := c.messages(ctx, call, token, channel, msgs)
	if err != nil {
		return saas.List[model.Message]{}, err
	}
	return saas.ListOf(c.kit, call, items, next), nil
}

// messagesText is the text of a page of messages.
func messagesText(out saas.List[model.Message]) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s)", len(out.Items))
	for _, m := range out.Items {
		who := "?"
		if m.Sender != nil {
			who = m.Sender.ID
			if m.Sender.Name != "" {
				who = m.Sender.Name
			}
		}
		fmt.Fprintf(&b, "\n[%s] %s: %s", m.SentAt.Format(time.RFC3339), who, m.Text)
	}
	return more(&b, out.NextCursor)
}

func (c *Connector) postMessage(ctx context.Context, call *connectors.Call, in *postMessageIn) (*legate.Result, error) {
	if err := checkText(in.Text); err != nil {
		return nil, err
	}
	var channel string
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) (err error) {
		channel, err = c.channel(ctx, call, token, in.Channel)
		return err
	})
	if err != nil {
		return nil, err
	}
	return c.post(ctx, call, channel, "", in.Text, false)
}

func (c *Connector) replyThread(ctx context.Context, call *connectors.Call, in *replyThreadIn) (*legate.Result, error) {
	if err := checkText(in.Text); err != nil {
		return nil, err
	}
	id, err := c.message(call, in.Thread)
	if err != nil {
		return nil, err
	}
	channel, ts := splitMessageID(id)
	return c.post(ctx, call, channel, ts, in.Text, in.Broadcast)
}

// post posts text to channel (in the thread of threadTS when set), once
// per idempotency key.
func (c *Connector) post(ctx context.Context, call *connectors.Call, channel, threadTS, text string, broadcast bool) (*legate.Result, error) {
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Message]{
		Send: func(ctx context.Context, token, marker string) (*model.Message, error) {
			opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
			if c.kit.Markers() {
				opts = append(opts, markerMetadata(marker))
			}
			if threadTS != "" {
				opts = append(opts, slack.MsgOptionTS(threadTS))
				if broadcast {
					opts = append(opts, slack.MsgOptionBroadcast())
				}
			}
			ch, ts, err := c.client(token).PostMessageContext(ctx, channel, opts...)
			if err != nil {
				return nil, mapError(ctx, err)
			}
			if ts == "" {
				return nil, saas.Mapping("slack", "chat.postMessage answered without a ts")
			}
			if ch == "" {
				ch = channel
			}
			api := c.client(token)
			me, _ := c.dir.WhoAmI(ctx, api, token)
			m, err := c.messageOf(call, ch, slack.Message{Msg: slack.Msg{Timestamp: ts, ThreadTimestamp: threadTS, Text: text, User: me.User}}, c.dir.Names(ctx, api, []string{me.User}))
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Message, error) {
			match, err := c.isPost(ctx, token, text, marker)
			if err != nil {
				return nil, err
			}
			found, err := webapi.FindPost(ctx, c.reads(token), channel, threadTS, match, since, c.kit.Markers())
			if err != nil || found == nil {
				return nil, mapError(ctx, err)
			}
			m, err := c.messageOf(call, channel, *found, c.dir.Names(ctx, c.client(token), []string{found.User}))
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	where := "posted"
	if threadTS != "" {
		where = "replied in the thread"
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("%s: message %s", where, out.Ref)}, nil
}

func checkText(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return legate.Errorf(legate.CodeInvalidArgument, "slack: text: must not be empty")
	case len(text) > MaxTextBytes:
		return legate.Errorf(legate.CodeInvalidArgument, "slack: text: at most %d bytes, got %d", MaxTextBytes, len(text))
	}
	return nil
}
