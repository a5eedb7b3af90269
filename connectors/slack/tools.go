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
)

type listChannelsIn struct {
	saas.Page
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema:"list archived channels too"`
}

type readHistoryIn struct {
	saas.Page
	Channel string `json:"channel" jsonschema:"ref of the channel, from list_channels"`
	Thread  string `json:"thread,omitempty" jsonschema:"ref of a message that starts a thread: read the thread's replies instead of the channel"`
}

type postMessageIn struct {
	Channel string `json:"channel" jsonschema:"ref of the channel, from list_channels"`
	Text    string `json:"text" jsonschema:"the message, in Slack mrkdwn"`
}

type replyThreadIn struct {
	Thread    string `json:"thread" jsonschema:"ref of the message to reply to, from read_history or post_message"`
	Text      string `json:"text" jsonschema:"the reply, in Slack mrkdwn"`
	Broadcast bool   `json:"broadcast,omitempty" jsonschema:"also post the reply to the channel"`
}

func (c *Connector) newTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[saas.List[model.Channel]](connectors.NewTool("list_channels",
			fmt.Sprintf("List the workspace's channels (channel.v1), a page at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page). Each channel's ref is what read_history and post_message take.", DefaultChannels, MaxChannels),
			legate.ClassRead, c.listChannels)),
		connectors.Returning[saas.List[model.Message]](connectors.NewTool("read_history",
			fmt.Sprintf("Read a channel's messages (message.v1), newest first, or a thread's replies, oldest first, a page at a time: limit (default %d, at most %d) and cursor.", DefaultMessages, MaxMessages),
			legate.ClassRead, c.readHistory)),
		connectors.Returning[model.Message](connectors.NewTool("post_message",
			"Post a message to a channel as the bot; returns the message (message.v1). Retrying the same call never posts twice.",
			legate.ClassWrite, c.postMessage)),
		connectors.Returning[model.Message](connectors.NewTool("reply_thread",
			"Reply in the thread of a message as the bot; returns the reply (message.v1). Retrying the same call never posts twice.",
			legate.ClassWrite, c.replyThread)),
	}
}

func (c *Connector) listChannels(ctx context.Context, call *connectors.Call, in *listChannelsIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultChannels, MaxChannels)
	if err != nil {
		return nil, err
	}
	types := []string{"public_channel"}
	if c.cfg.IncludePrivate {
		types = append(types, "private_channel")
	}
	var out saas.List[model.Channel]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		chans, next, err := c.client(token).GetConversationsContext(ctx, &slack.GetConversationsParameters{
			Cursor: p.Token, Limit: p.Size, Types: types, ExcludeArchived: !in.IncludeArchived})
		if err != nil {
			return mapError(ctx, err)
		}
		items := make([]model.Channel, 0, len(chans))
		for _, ch := range chans {
			m, err := c.channelOf(call, ch)
			if err != nil {
				return err
			}
			items = append(items, m)
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
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (c *Connector) readHistory(ctx context.Context, call *connectors.Call, in *readHistoryIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultMessages, MaxMessages)
	if err != nil {
		return nil, err
	}
	channel, err := c.kit.Resolve(call, kindChannel, in.Channel)
	if err != nil {
		return nil, err
	}
	threadTS := ""
	if in.Thread != "" {
		id, err := c.kit.Resolve(call, kindMessage, in.Thread)
		if err != nil {
			return nil, err
		}
		ch, ts := splitMessageID(id)
		if ch != channel {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: thread: the message is not in that channel")
		}
		threadTS = ts
	}
	var out saas.List[model.Message]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api := c.client(token)
		var msgs []slack.Message
		var next string
		if threadTS == "" {
			resp, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: channel, Cursor: p.Token, Limit: p.Size})
			if err != nil {
				return mapError(ctx, err)
			}
			msgs, next = resp.Messages, resp.ResponseMetaData.NextCursor
		} else {
			var err error
			msgs, _, next, err = api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: threadTS, Cursor: p.Token, Limit: p.Size})
			if err != nil {
				return mapError(ctx, err)
			}
		}
		items := make([]model.Message, 0, len(msgs))
		for _, m := range msgs {
			mm, err := c.messageOf(call, channel, m)
			if err != nil {
				return err
			}
			items = append(items, mm)
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s)", len(out.Items))
	for _, m := range out.Items {
		who := "?"
		if m.Sender != nil {
			who = m.Sender.ID
		}
		fmt.Fprintf(&b, "\n[%s] %s: %s", m.SentAt.Format(time.RFC3339), who, m.Text)
	}
	if out.NextCursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

func (c *Connector) postMessage(ctx context.Context, call *connectors.Call, in *postMessageIn) (*legate.Result, error) {
	if err := checkText(in.Text); err != nil {
		return nil, err
	}
	channel, err := c.kit.Resolve(call, kindChannel, in.Channel)
	if err != nil {
		return nil, err
	}
	return c.post(ctx, call, channel, "", in.Text, false)
}

func (c *Connector) replyThread(ctx context.Context, call *connectors.Call, in *replyThreadIn) (*legate.Result, error) {
	if err := checkText(in.Text); err != nil {
		return nil, err
	}
	id, err := c.kit.Resolve(call, kindMessage, in.Thread)
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
			opts := []slack.MsgOption{slack.MsgOptionText(text, false), markerMetadata(marker)}
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
			m, err := c.messageOf(call, ch, slack.Message{Msg: slack.Msg{Timestamp: ts, ThreadTimestamp: threadTS, Text: text}})
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Message, error) {
			found, err := c.findPost(ctx, token, channel, threadTS, marker, since)
			if err != nil || found == nil {
				return nil, err
			}
			m, err := c.messageOf(call, channel, *found)
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
