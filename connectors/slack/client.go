package slack

import (
	"context"
	"errors"
	"html"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/slack/workspace"
)

// errorCodes are the canonical codes of the errors Slack answers with
// "ok": false; one not listed is INVALID_ARGUMENT (the call as made will
// not succeed).
var errorCodes = map[string]legate.Code{
	"not_authed": legate.CodeAuthExpired, "invalid_auth": legate.CodeAuthExpired, "token_revoked": legate.CodeAuthExpired,
	"token_expired": legate.CodeAuthExpired, "account_inactive": legate.CodeAuthExpired, "no_permission": legate.CodePermissionDenied,
	"missing_scope": legate.CodePermissionDenied, "not_allowed_token_type": legate.CodePermissionDenied,
	"not_in_channel": legate.CodePermissionDenied, "restricted_action": legate.CodePermissionDenied,
	"ekm_access_denied": legate.CodePermissionDenied, "access_denied": legate.CodePermissionDenied,
	"team_access_not_granted": legate.CodePermissionDenied,
	"channel_not_found":       legate.CodeNotFound, "thread_not_found": legate.CodeNotFound, "message_not_found": legate.CodeNotFound,
	"user_not_found": legate.CodeNotFound, "users_not_found": legate.CodeNotFound, "file_not_found": legate.CodeNotFound,
	"file_deleted": legate.CodeNotFound, "invalid_scheduled_message_id": legate.CodeNotFound, "no_reaction": legate.CodeConflict,
	"time_in_past": legate.CodeInvalidArgument, "time_too_far": legate.CodeInvalidArgument,
	"is_archived": legate.CodeConflict, "already_reacted": legate.CodeConflict, "cant_update_message": legate.CodeConflict,
	"ratelimited": legate.CodeRateLimited, "rate_limited": legate.CodeRateLimited,
	"internal_error": legate.CodeTransient, "fatal_error": legate.CodeTransient, "service_unavailable": legate.CodeTransient,
	"request_timeout": legate.CodeTransient,
}

// mapError makes an error of slack-go canonical: Slack's own error
// answers by their name, HTTP statuses by the toolkit's table, the rest by
// saas.Classify. ctx is the attempt's.
func mapError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		return saas.RateLimited("slack", rl.RetryAfter)
	case errors.As(err, &sc):
		return saas.StatusError("slack", sc.Code, 0, "Slack answered "+sc.Status)
	case errors.As(err, &se):
		code, ok := errorCodes[se.Err]
		if !ok {
			code = legate.CodeInvalidArgument
		}
		msg := "slack: " + se.Err
		if se.Needed != "" {
			msg += " (needed: " + se.Needed + ")"
		}
		return &legate.Error{Code: code, Message: msg}
	}
	return saas.Classify(ctx, err, "slack")
}

// The kinds of the refs the connector hands out.
const (
	kindChannel = "channel"
	kindMessage = "message"
)

// messageID is the provider id of a message: its channel and timestamp,
// and for a reply the timestamp of its thread's first message, which is
// what a reply to it must name (Slack asks for the parent's ts, never a
// reply's).
func messageID(channel, ts, thread string) string {
	if thread != "" && thread != ts {
		return channel + "/" + ts + "/" + thread
	}
	return channel + "/" + ts
}

// splitMessageID returns the channel of a message id, and the ts of the
// thread a reply to the message goes in.
func splitMessageID(id string) (channel, threadTS string) {
	channel, rest, _ := strings.Cut(id, "/")
	ts, thread, reply := strings.Cut(rest, "/")
	if reply {
		return channel, thread
	}
	return channel, ts
}

// channelOf converts a conversation to channel.v1.
func (c *base) channelOf(call *connectors.Call, ch slack.Channel) (model.Channel, error) {
	if ch.ID == "" {
		return model.Channel{}, saas.Mapping("slack", "a channel without an id")
	}
	out := model.Channel{
		Object:  c.kit.Object(call, model.ChannelV1, kindChannel, ch.ID),
		Name:    ch.Name,
		Topic:   ch.Topic.Value,
		Private: ch.IsPrivate, Archived: ch.IsArchived, Members: ch.NumMembers,
	}
	if ch.Created > 0 {
		out.CreatedAt = ch.Created.Time().UTC()
	}
	meta := map[string]any{}
	if ch.Purpose.Value != "" {
		meta["purpose"] = ch.Purpose.Value
	}
	if ch.IsGeneral {
		meta["is_general"] = true
	}
	meta["is_member"] = ch.IsMember
	out.ProviderMetadata = meta
	return out, nil
}

// messages converts msgs of channel to message.v1, each naming its
// author through the user directory.
func (c *base) messages(ctx context.Context, call *connectors.Call, token, channel string, msgs []slack.Message) ([]model.Message, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.User
	}
	who := c.dir.Names(ctx, c.client(token), ids)
	out := make([]model.Message, 0, len(msgs))
	for _, m := range msgs {
		mm, err := c.messageOf(call, channel, m, who)
		if err != nil {
			return nil, err
		}
		out = append(out, mm)
	}
	return out, nil
}

// messageOf converts a message of channel to message.v1; who names its
// author when it holds the author's id.
func (c *base) messageOf(call *connectors.Call, channel string, m slack.Message, who map[string]slack.User) (model.Message, error) {
	if m.Timestamp == "" {
		return model.Message{}, saas.Mapping("slack", "a message without a ts")
	}
	out := model.Message{
		Object:     c.kit.Object(call, model.MessageV1, kindMessage, messageID(channel, m.Timestamp, m.ThreadTimestamp)),
		ChannelRef: c.kit.Ref(call, kindChannel, channel),
		Text:       m.Text,
		SentAt:     tsTime(m.Timestamp),
		Replies:    m.ReplyCount,
	}
	if m.ThreadTimestamp != "" && m.ThreadTimestamp != m.Timestamp {
		out.ThreadRef = c.kit.Ref(call, kindMessage, messageID(channel, m.ThreadTimestamp, ""))
	}
	meta := map[string]any{"ts": m.Timestamp, "channel_id": channel}
	switch {
	case m.User != "":
		out.Sender = &model.Person{ID: m.User, Name: m.Username}
		if u, ok := who[m.User]; ok {
			out.Sender.Name = workspace.DisplayName(u)
			meta["user_name"], meta["real_name"] = u.Name, u.RealName
		}
	case m.BotID != "":
		out.Sender = &model.Person{ID: m.BotID, Name: m.Username}
	}
	if m.SubType != "" {
		meta["subtype"] = m.SubType
	}
	if m.Metadata.EventType != "" {
		meta["metadata_event_type"] = m.Metadata.EventType
	}
	if len(m.Reactions) > 0 {
		r := map[string]int{}
		for _, x := range m.Reactions {
			r[x.Name] = x.Count
		}
		meta["reactions"] = r
	}
	if len(m.Files) > 0 {
		var files []string
		for _, f := range m.Files {
			files = append(files, f.ID)
		}
		meta["file_ids"] = files
	}
	out.ProviderMetadata = meta
	return out, nil
}

// tsTime reads a Slack timestamp ("1700000000.000100"); zero if it is not one.
func tsTime(ts string) time.Time {
	secs, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return time.Time{}
	}
	var micros int64
	if frac != "" {
		micros, _ = strconv.ParseInt((frac + "000000")[:6], 10, 64)
	}
	return time.Unix(s, micros*1000).UTC()
}

// The metadata a post carries when markers are on, so that a retry
// finds it.
const (
	metadataEvent = "legate_operation"
	metadataKey   = "operation"
)

func markerMetadata(marker string) slack.MsgOption {
	return slack.MsgOptionMetadata(slack.SlackMetadata{EventType: metadataEvent, EventPayload: map[string]any{metadataKey: marker}})
}

func hasMarker(m slack.Message, marker string) bool {
	return m.Metadata.EventType == metadataEvent && m.Metadata.EventPayload[metadataKey] == marker
}

// isPost returns the test that tells the post of an earlier attempt: its
// marker when markers are on, else the same text by the token's own
// account (its user, or its bot).
func (c *base) isPost(ctx context.Context, token, text, marker string) (func(slack.Message) bool, error) {
	if c.kit.Markers() {
		return func(m slack.Message) bool { return hasMarker(m, marker) }, nil
	}
	me, err := c.dir.WhoAmI(ctx, c.client(token), token)
	if err != nil {
		return nil, mapError(ctx, err)
	}
	return func(m slack.Message) bool {
		mine := m.User != "" && m.User == me.User || me.Bot != "" && m.BotID == me.Bot
		return mine && sameText(m.Text, text)
	}, nil
}

// sameText compares a text as posted with Slack's copy, which escapes &,
// < and > that are not part of a link or mention.
func sameText(stored, posted string) bool {
	return stored == posted || html.UnescapeString(stored) == posted
}

// scope is one OAuth scope and the tools that need it.
type scope struct {
	scope string
	tools []string
}

// scopes are the scopes of the type's tools (the writes need history too,
// to find a post whose answer was lost).
var scopes = []scope{
	{"channels:read", []string{"list_channels", "list_unreads"}},
	{"channels:history", []string{"read_history", "read_thread", "list_unreads", "post_message", "reply_thread"}},
	{"chat:write", []string{"post_message", "reply_thread", "schedule_message", "delete_scheduled"}},
	{"users:read", []string{"list_users", "find_user", "open_dm"}},
	{"reactions:write", []string{"add_reaction", "remove_reaction"}},
	{"files:write", []string{"upload_file"}},
	{"files:read", []string{"read_file", "upload_file"}},
	{"channels:write.topic", []string{"set_topic"}},
}

// neededScopes are the scopes of the tools the instance offers.
func (c *Connector) neededScopes() []scope {
	all := scopes
	if c.cfg.IncludePrivate {
		all = append(slices.Clip(all), scope{"groups:read", []string{"list_channels"}}, scope{"groups:history", []string{"read_history"}})
	}
	var out []scope
	for _, s := range all {
		var offered []string
		for _, t := range s.tools {
			if slices.ContainsFunc(c.tools, func(x connectors.Tool) bool { return x.Name == t }) {
				offered = append(offered, t)
			}
		}
		if len(offered) > 0 {
			out = append(out, scope{s.scope, offered})
		}
	}
	return out
}

func scopeNames(s []scope) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.scope
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
