package slack

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/slack/workspace"
)

// The native ids a tool takes beside its refs.
var (
	channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)
	permalink = regexp.MustCompile(`^/archives/([CGD][A-Z0-9]{2,})/p(\d{10})(\d{6})$`)
)

// channelHelp ends the error of a channel that cannot be resolved.
const channelHelp = "pass a channel ref from list_channels, a channel id (C…, G…, D…), #name, or for a DM @user, a user id (U…) or an e-mail"

// channel resolves what a tool was given as a channel, for call, with
// token: a ref this connector returned, a channel id, #name (through
// conversations.list, cached), or a person (@handle, U…, e-mail), whose
// DM it opens (conversations.open: it creates no message and notifies
// nobody).
func (c *base) channel(ctx context.Context, call *connectors.Call, token, in string) (string, error) {
	in = strings.TrimSpace(in)
	switch {
	case strings.HasPrefix(in, kindChannel+"://"):
		return c.kit.Resolve(call, kindChannel, in)
	case channelID.MatchString(in):
		return in, nil
	case strings.HasPrefix(in, "#"):
		id, err := c.dir.ChannelNamed(ctx, c.client(token), token, strings.TrimPrefix(in, "#"), c.channelTypes())
		return id, mapError(ctx, err)
	case strings.HasPrefix(in, "@") || workspace.UserID.MatchString(in) || strings.Contains(in, "@"):
		api := c.client(token)
		u, err := c.dir.Person(ctx, api, in)
		if err != nil {
			return "", mapError(ctx, err)
		}
		id, err := workspace.OpenDM(ctx, api, u.ID)
		return id, mapError(ctx, err)
	}
	return "", legate.Errorf(legate.CodeNotFound, "slack: no channel %q: %s", in, channelHelp)
}

// channelTypes are the conversation types list_channels shows.
func (c *base) channelTypes() []string {
	if c.cfg.IncludePrivate {
		return []string{"public_channel", "private_channel"}
	}
	return []string{"public_channel"}
}

// message resolves a message given as a ref this connector returned, or
// as its permalink (https://x.slack.com/archives/C…/p1712345678123456,
// with ?thread_ts=… for a reply), to its message id (see messageID).
func (c *base) message(call *connectors.Call, in string) (string, error) {
	in = strings.TrimSpace(in)
	if strings.HasPrefix(in, kindMessage+"://") {
		return c.kit.Resolve(call, kindMessage, in)
	}
	u, err := url.Parse(in)
	if err == nil && (u.Scheme == "https" || u.Scheme == "http") {
		if m := permalink.FindStringSubmatch(u.Path); m != nil {
			return messageID(m[1], m[2]+"."+m[3], u.Query().Get("thread_ts")), nil
		}
	}
	return "", legate.Errorf(legate.CodeNotFound, "slack: no message %q: pass a message ref from read_history or search_messages, or the message's permalink (https://…slack.com/archives/C…/p…)", in)
}
