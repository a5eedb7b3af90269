package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// kindScheduled is the kind of a scheduled message's ref.
const kindScheduled = "scheduled"

// MaxSchedule is how far ahead Slack schedules a message.
const MaxSchedule = 120 * 24 * time.Hour

type reactionIn struct {
	Message string `json:"message" jsonschema:"the message: its ref (from read_history, search_messages) or its permalink"`
	Emoji   string `json:"emoji" jsonschema:"the emoji's name, with or without colons: eyes, :white_check_mark:"`
}

// reactionOut is the state of one reaction of the token's account.
type reactionOut struct {
	MessageRef string `json:"message_ref"`
	Emoji      string `json:"emoji"`
	Reacted    bool   `json:"reacted" jsonschema:"the token's account now has this reaction on the message"`
}

type setTopicIn struct {
	Channel string `json:"channel" jsonschema:"the channel: a ref, an id (C…, G…) or #name"`
	Topic   string `json:"topic" jsonschema:"the new topic; empty clears it"`
}

type scheduleIn struct {
	Channel string `json:"channel" jsonschema:"where to post: a channel ref, an id, #name, or a person (@handle, U…, e-mail) to DM"`
	Text    string `json:"text" jsonschema:"the message, in Slack mrkdwn"`
	PostAt  string `json:"post_at" jsonschema:"when, in RFC 3339 with its offset: 2026-03-02T09:00:00+01:00; at most 120 days ahead"`
}

type listScheduledIn struct {
	saas.Page
	Channel string `json:"channel,omitempty" jsonschema:"only this channel's (ref, id or #name); all channels when omitted"`
}

type deleteScheduledIn struct {
	Scheduled string `json:"scheduled" jsonschema:"ref of the scheduled message, from schedule_message or list_scheduled"`
}

// Scheduled is a message waiting to be posted.
type Scheduled struct {
	Ref        string    `json:"ref" jsonschema:"pass it to delete_scheduled"`
	ExternalID string    `json:"external_id"`
	ChannelRef string    `json:"channel_ref"`
	Text       string    `json:"text"`
	PostAt     time.Time `json:"post_at,omitzero"`
	Deleted    bool      `json:"deleted,omitempty"`
}

// scheduler runs the tools of scheduled messages.
type scheduler struct{ *base }

func (c *Connector) writeTools() []connectors.Tool {
	s := scheduler{c.base}
	return []connectors.Tool{
		inToolset("messages", connectors.Returning[reactionOut](connectors.NewTool("add_reaction",
			writes("React to a message with an emoji as the token's account (reactions.add); a reaction already there counts as done."),
			legate.ClassWrite, c.addReaction))),
		inToolset("messages", connectors.Returning[reactionOut](connectors.NewTool("remove_reaction",
			writes("Take the token's account's emoji reaction off a message (reactions.remove); one already gone counts as done."),
			legate.ClassWrite, c.removeReaction))),
		inToolset("messages", connectors.Returning[Scheduled](connectors.NewTool("schedule_message",
			writes("Schedule a message to a channel or a person's DM at a time (chat.scheduleMessage), as the token's account; returns the scheduled message, whose ref delete_scheduled takes."),
			legate.ClassWrite, s.scheduleMessage))),
		inToolset("messages", connectors.Returning[saas.List[Scheduled]](connectors.NewTool("list_scheduled",
			fmt.Sprintf("List the messages the token's account has scheduled and not yet posted, of one channel or all, a page at a time: limit (default %d, at most %d) and cursor.", DefaultMessages, MaxMessages),
			legate.ClassRead, s.listScheduled))),
		inToolset("messages", connectors.Returning[Scheduled](connectors.NewTool("delete_scheduled",
			writes("Delete a scheduled message before it is posted (chat.deleteScheduledMessage)."),
			legate.ClassDestructive, s.deleteScheduled))),
		inToolset("admin", connectors.Returning[model.Channel](connectors.NewTool("set_topic",
			writes("Set a channel's topic (conversations.setTopic) as the token's account; returns the channel."),
			legate.ClassWrite, c.setTopic))),
	}
}

// slackError is the name of the error Slack answered err with, "" for
// another failure.
func slackError(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

func (c *Connector) addReaction(ctx context.Context, call *connectors.Call, in *reactionIn) (*legate.Result, error) {
	return c.react(ctx, call, in, true)
}

func (c *Connector) removeReaction(ctx context.Context, call *connectors.Call, in *reactionIn) (*legate.Result, error) {
	return c.react(ctx, call, in, false)
}

// react adds or removes a reaction. Slack deduplicates it (a second add
// is already_reacted, a second remove no_reaction), so a retry sends
// again and counts that answer as done: no Find.
func (c *Connector) react(ctx context.Context, call *connectors.Call, in *reactionIn, add bool) (*legate.Result, error) {
	emoji := strings.Trim(strings.TrimSpace(in.Emoji), ":")
	if emoji == "" || strings.ContainsAny(emoji, " \t\n") {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: emoji: an emoji's name, like eyes or white_check_mark, got %q", in.Emoji)
	}
	id, err := c.message(call, in.Message)
	if err != nil {
		return nil, err
	}
	channel, ts, _ := strings.Cut(id, "/")
	ts, _, _ = strings.Cut(ts, "/")
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[reactionOut]{
		Send: func(ctx context.Context, token, _ string) (*reactionOut, error) {
			item := slack.NewRefToMessage(channel, ts)
			var err error
			done := "already_reacted"
			if add {
				err = c.client(token).AddReactionContext(ctx, emoji, item)
			} else {
				err, done = c.client(token).RemoveReactionContext(ctx, emoji, item), "no_reaction"
			}
			if err != nil && slackError(err) != done {
				return nil, mapError(ctx, err)
			}
			return &reactionOut{MessageRef: c.kit.Ref(call, kindMessage, id), Emoji: emoji, Reacted: add}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	verb := "reacted with"
	if !add {
		verb = "removed the reaction"
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("%s :%s: on %s", verb, emoji, out.MessageRef)}, nil
}

func (c *Connector) setTopic(ctx context.Context, call *connectors.Call, in *setTopicIn) (*legate.Result, error) {
	if len(in.Topic) > 250 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: topic: at most 250 characters, got %d", len(in.Topic))
	}
	var channel string
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) (err error) {
		channel, err = c.channel(ctx, call, token, in.Channel)
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Channel]{
		Send: func(ctx context.Context, token, _ string) (*model.Channel, error) {
			ch, err := c.client(token).SetTopicOfConversationContext(ctx, channel, in.Topic)
			if err != nil {
				return nil, mapError(ctx, err)
			}
			if ch.ID == "" {
				ch.ID = channel
			}
			m, err := c.channelOf(call, *ch)
			return &m, err
		},
		// Setting a topic twice changes nothing more, but Slack shows a
		// "set the topic" line each time: a retry looks first.
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*model.Channel, error) {
			ch, err := c.client(token).GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: channel})
			if err != nil {
				return nil, mapError(ctx, err)
			}
			if !sameText(ch.Topic.Value, in.Topic) {
				return nil, nil
			}
			m, err := c.channelOf(call, *ch)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("topic of #%s set to %q", out.Name, out.Topic)}, nil
}

// scheduledOf converts a scheduled message of channel.
func (c scheduler) scheduledOf(call *connectors.Call, channel string, m slack.ScheduledMessage) Scheduled {
	id := channel + "/" + m.ID + "/" + strconv.Itoa(m.PostAt)
	return Scheduled{Ref: c.kit.Ref(call, kindScheduled, id), ExternalID: m.ID, ChannelRef: c.kit.Ref(call, kindChannel, channel),
		Text: m.Text, PostAt: time.Unix(int64(m.PostAt), 0).UTC()}
}

func (c scheduler) scheduleMessage(ctx context.Context, call *connectors.Call, in *scheduleIn) (*legate.Result, error) {
	if err := checkText(in.Text); err != nil {
		return nil, err
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(in.PostAt))
	switch {
	case err != nil:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: post_at: a time in RFC 3339 with its offset, like 2026-03-02T09:00:00+01:00, got %q", in.PostAt)
	case !at.After(time.Now()):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: post_at: %s is past; post_message posts now", at.Format(time.RFC3339))
	case at.After(time.Now().Add(MaxSchedule)):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "slack: post_at: Slack schedules at most 120 days ahead")
	}
	var channel string
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) (err error) {
		channel, err = c.channel(ctx, call, token, in.Channel)
		return err
	})
	if err != nil {
		return nil, err
	}
	postAt := at.Unix()
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[Scheduled]{
		Send: func(ctx context.Context, token, _ string) (*Scheduled, error) {
			ch, id, err := c.client(token).ScheduleMessageContext(ctx, channel, strconv.FormatInt(postAt, 10), slack.MsgOptionText(in.Text, false))
			if err != nil {
				return nil, mapError(ctx, err)
			}
			if id == "" {
				return nil, saas.Mapping("slack", "chat.scheduleMessage answered without a scheduled_message_id")
			}
			s := c.scheduledOf(call, cmp.Or(ch, channel), slack.ScheduledMessage{ID: id, Text: in.Text, PostAt: int(postAt)})
			return &s, nil
		},
		// Scheduled messages carry no metadata: the same text at the same
		// time in the same channel is the earlier attempt's.
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Scheduled, error) {
			msgs, err := c.scheduled(ctx, token, channel, postAt)
			if err != nil {
				return nil, err
			}
			i := slices.IndexFunc(msgs, func(m slack.ScheduledMessage) bool { return int64(m.PostAt) == postAt && sameText(m.Text, in.Text) })
			if i < 0 {
				return nil, nil
			}
			s := c.scheduledOf(call, channel, msgs[i])
			return &s, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("scheduled for %s: %s", out.PostAt.Format(time.RFC3339), out.Ref)}, nil
}

// scheduledPages bounds the scheduled messages a retry reads.
const scheduledPages = 5

// scheduled lists channel's messages scheduled at postAt, at most
// scheduledPages pages.
func (c scheduler) scheduled(ctx context.Context, token, channel string, postAt int64) ([]slack.ScheduledMessage, error) {
	var out []slack.ScheduledMessage
	cursor := ""
	at := strconv.FormatInt(postAt, 10)
	for range scheduledPages {
		msgs, next, err := c.client(token).GetScheduledMessagesContext(ctx, &slack.GetScheduledMessagesParameters{Channel: channel, Oldest: at, Latest: at, Cursor: cursor, Limit: 100})
		if err != nil {
			return nil, mapError(ctx, err)
		}
		out = append(out, msgs...)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
	return nil, legate.Errorf(legate.CodeConflict, "slack: cannot tell whether an earlier attempt went through: more than %d pages of messages scheduled at that time; check list_scheduled", scheduledPages)
}

func (c scheduler) listScheduled(ctx context.Context, call *connectors.Call, in *listScheduledIn) (*legate.Result, error) {
	p, err := c.kit.Open(call, in.Page, DefaultMessages, MaxMessages)
	if err != nil {
		return nil, err
	}
	var out saas.List[Scheduled]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		channel := ""
		if in.Channel != "" {
			var err error
			if channel, err = c.channel(ctx, call, token, in.Channel); err != nil {
				return err
			}
		}
		msgs, next, err := c.client(token).GetScheduledMessagesContext(ctx, &slack.GetScheduledMessagesParameters{Channel: channel, Cursor: p.Token, Limit: p.Size})
		if err != nil {
			return mapError(ctx, err)
		}
		items := make([]Scheduled, 0, len(msgs))
		for _, m := range msgs {
			items = append(items, c.scheduledOf(call, m.Channel, m))
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d scheduled message(s)", len(out.Items))
	for _, s := range out.Items {
		fmt.Fprintf(&b, "\n[%s] %s", s.PostAt.Format(time.RFC3339), s.Text)
	}
	return &legate.Result{Structured: out, Text: more(&b, out.NextCursor)}, nil
}

func (c scheduler) deleteScheduled(ctx context.Context, call *connectors.Call, in *deleteScheduledIn) (*legate.Result, error) {
	id, err := c.kit.Resolve(call, kindScheduled, in.Scheduled)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return nil, legate.Errorf(legate.CodeNotFound, "slack: no scheduled message %q: pass a ref from schedule_message or list_scheduled", in.Scheduled)
	}
	channel, msgID := parts[0], parts[1]
	postAt, _ := strconv.ParseInt(parts[2], 10, 64)
	done := Scheduled{Ref: in.Scheduled, ExternalID: msgID, ChannelRef: c.kit.Ref(call, kindChannel, channel), Deleted: true}
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[Scheduled]{
		Send: func(ctx context.Context, token, _ string) (*Scheduled, error) {
			_, err := c.client(token).DeleteScheduledMessageContext(ctx, &slack.DeleteScheduledMessageParameters{Channel: channel, ScheduledMessageID: msgID})
			if err != nil {
				return nil, mapError(ctx, err)
			}
			return &done, nil
		},
		// Gone from the list: an earlier attempt deleted it (or Slack
		// posted it meanwhile, which deleting could not undo).
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*Scheduled, error) {
			msgs, err := c.scheduled(ctx, token, channel, postAt)
			if err != nil || slices.ContainsFunc(msgs, func(m slack.ScheduledMessage) bool { return m.ID == msgID }) {
				return nil, err
			}
			return &done, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "deleted the scheduled message " + out.ExternalID}, nil
}
