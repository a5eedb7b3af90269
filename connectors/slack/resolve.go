package slack

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// The native ids a tool takes beside its refs.
var (
	channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)
	userID    = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	permalink = regexp.MustCompile(`^/archives/([CGD][A-Z0-9]{2,})/p(\d{10})(\d{6})$`)
)

// channelHelp ends the error of a channel that cannot be resolved.
const channelHelp = "pass a channel ref from list_channels, a channel id (C…, G…, D…), #name, or for a DM @user, a user id (U…) or an e-mail"

// channel resolves what a tool was given as a channel, for call, with
// token: a ref this connector returned, a channel id, #name (through
// conversations.list, cached), or a person (@handle, U…, e-mail), whose
// DM it opens (conversations.open: it creates no message and notifies
// nobody).
func (c *Connector) channel(ctx context.Context, call *connectors.Call, token, in string) (string, error) {
	in = strings.TrimSpace(in)
	switch {
	case strings.HasPrefix(in, kindChannel+"://"):
		return c.kit.Resolve(call, kindChannel, in)
	case channelID.MatchString(in):
		return in, nil
	case strings.HasPrefix(in, "#"):
		return c.channelNamed(ctx, token, strings.TrimPrefix(in, "#"))
	case strings.HasPrefix(in, "@") || userID.MatchString(in) || strings.Contains(in, "@"):
		u, err := c.person(ctx, token, in)
		if err != nil {
			return "", err
		}
		return c.openDM(ctx, token, u.ID)
	}
	return "", legate.Errorf(legate.CodeNotFound, "slack: no channel %q: %s", in, channelHelp)
}

// channelNamed returns the id of the channel named name, walking
// conversations.list (at most DirectoryPages pages) on a miss.
func (c *Connector) channelNamed(ctx context.Context, token, name string) (string, error) {
	key := digest(token)
	if m, ok := c.dir.channels.Get(key); ok {
		if id, ok := m[name]; ok {
			return id, nil
		}
	}
	m := map[string]string{}
	cursor := ""
	for range DirectoryPages {
		chans, next, err := c.client(token).GetConversationsContext(ctx, &slack.GetConversationsParameters{
			Cursor: cursor, Limit: 1000, Types: c.channelTypes(), ExcludeArchived: false})
		if err != nil {
			return "", mapError(ctx, err)
		}
		for _, ch := range chans {
			m[ch.Name] = ch.ID
		}
		if next == "" {
			break
		}
		cursor = next
	}
	c.dir.channels.Add(key, m)
	if id, ok := m[name]; ok {
		return id, nil
	}
	return "", legate.Errorf(legate.CodeNotFound, "slack: no channel #%s that this token can see: check the name with list_channels (a private channel needs include_private and the token's account in it)", name)
}

// channelTypes are the conversation types list_channels shows.
func (c *Connector) channelTypes() []string {
	if c.cfg.IncludePrivate {
		return []string{"public_channel", "private_channel"}
	}
	return []string{"public_channel"}
}

// person resolves a user given as @handle (or a name), a user id or an
// e-mail.
func (c *Connector) person(ctx context.Context, token, in string) (slack.User, error) {
	in = strings.TrimSpace(in)
	switch {
	case userID.MatchString(in):
		return c.user(ctx, token, in)
	case strings.Contains(strings.TrimPrefix(in, "@"), "@"):
		u, err := c.client(token).GetUserByEmailContext(ctx, in)
		if err != nil {
			if le := mapError(ctx, err); legate.CodeOf(le) != legate.CodeInvalidArgument {
				return slack.User{}, le
			}
			return slack.User{}, legate.Errorf(legate.CodeNotFound, "slack: no user with the e-mail %s (users.lookupByEmail needs the users:read.email scope)", in)
		}
		c.dir.users.Add(u.ID, *u)
		return *u, nil
	}
	users, complete, err := c.everyone(ctx, token)
	if err != nil {
		return slack.User{}, err
	}
	var exact, partial []slack.User
	for _, u := range users {
		if u.Deleted {
			continue
		}
		e, p := matchUser(u, in)
		if e {
			exact = append(exact, u)
		} else if p {
			partial = append(partial, u)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) == 0 && len(partial) == 1:
		return partial[0], nil
	case len(exact)+len(partial) > 1:
		return slack.User{}, legate.Errorf(legate.CodeInvalidArgument, "slack: %q names %d users: call find_user to see them, then pass the user id (U…)", in, len(exact)+len(partial))
	}
	msg := "slack: no user %q: find_user searches by name; an e-mail or a user id (U…) names one exactly"
	if !complete {
		msg += " (the directory was read only in part: pass the user id or e-mail)"
	}
	return slack.User{}, legate.Errorf(legate.CodeNotFound, msg, in)
}

// openDM returns the DM channel with user (conversations.open).
func (c *Connector) openDM(ctx context.Context, token, user string) (string, error) {
	ch, _, _, err := c.client(token).OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}, ReturnIM: true})
	if err != nil {
		return "", mapError(ctx, err)
	}
	if ch == nil || ch.ID == "" {
		return "", saas.Mapping("slack", "conversations.open answered without a channel")
	}
	return ch.ID, nil
}

// message resolves a message given as a ref this connector returned, or
// as its permalink (https://x.slack.com/archives/C…/p1712345678123456,
// with ?thread_ts=… for a reply), to its message id (see messageID).
func (c *Connector) message(call *connectors.Call, in string) (string, error) {
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
