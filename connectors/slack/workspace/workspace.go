// Package workspace is the slack connector's cached directory of a Slack
// workspace: its users (by id, and the whole list for look-ups by name),
// its channels' names, and the account each token acts as. Every cache
// is bounded and expires; a miss asks Slack again. Look-ups take the
// slack-go client of the call's token and return slack-go's errors as
// they come, for the connector to map, or a canonical NOT_FOUND or
// INVALID_ARGUMENT that says what to pass instead.
package workspace

import (
	"context"
	"crypto/sha256"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
)

// Bounds of the caches: a user's entry lives UserTTL and is fetched again
// on a miss; the whole directory (for look-ups by name) and the channel
// names are read at most Pages pages and kept ListTTL.
const (
	UserTTL  = time.Hour
	ListTTL  = 15 * time.Minute
	Pages    = 25
	MaxUsers = 20000
	// MaxNamed bounds the users one call of Names fetches one by one; the
	// rest are left out.
	MaxNamed = 20
)

// UserID matches a user id (U…, W… for an Enterprise Grid user).
var UserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

// Directory is one connector instance's cache of its workspace. It is
// safe for concurrent use.
type Directory struct {
	users    *expirable.LRU[string, slack.User] // by id
	all      *expirable.LRU[string, snapshot]
	channels *expirable.LRU[string, map[string]string] // name -> id, by token digest
	selves   *expirable.LRU[string, Self]              // by token digest
}

// snapshot is the user list as read: complete says every page was.
type snapshot struct {
	users    []slack.User
	complete bool
}

// Self is a token's own account: the user it acts as, and its bot (""
// for a user token).
type Self struct{ User, Bot string }

// New returns an empty directory.
func New() *Directory {
	return &Directory{
		users:    expirable.NewLRU[string, slack.User](MaxUsers, nil, UserTTL),
		all:      expirable.NewLRU[string, snapshot](1, nil, ListTTL),
		channels: expirable.NewLRU[string, map[string]string](64, nil, ListTTL),
		selves:   expirable.NewLRU[string, Self](256, nil, 24*time.Hour),
	}
}

// digest keys a cache by token without keeping the token.
func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return string(sum[:])
}

// WhoAmI returns the account of token, whose client api is (auth.test,
// once per token).
func (d *Directory) WhoAmI(ctx context.Context, api *slack.Client, token string) (Self, error) {
	if s, ok := d.selves.Get(digest(token)); ok {
		return s, nil
	}
	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		return Self{}, err
	}
	s := Self{User: auth.UserID, Bot: auth.BotID}
	d.selves.Add(digest(token), s)
	return s, nil
}

// Remember keeps users read elsewhere (users.list).
func (d *Directory) Remember(users ...slack.User) {
	for _, u := range users {
		d.users.Add(u.ID, u)
	}
}

// User returns the user of id, from the cache or users.info.
func (d *Directory) User(ctx context.Context, api *slack.Client, id string) (slack.User, error) {
	if u, ok := d.users.Get(id); ok {
		return u, nil
	}
	u, err := api.GetUserInfoContext(ctx, id)
	if err != nil {
		return slack.User{}, err
	}
	d.users.Add(u.ID, *u)
	return *u, nil
}

// Names returns the users of ids that the cache holds or Slack tells,
// fetching at most MaxNamed unknown ones; an id Slack does not know, or
// one past the bound, is left out.
func (d *Directory) Names(ctx context.Context, api *slack.Client, ids []string) map[string]slack.User {
	out := map[string]slack.User{}
	fetched := 0
	for _, id := range ids {
		if _, done := out[id]; done || id == "" {
			continue
		}
		if u, ok := d.users.Get(id); ok {
			out[id] = u
			continue
		}
		if fetched >= MaxNamed || !UserID.MatchString(id) {
			continue
		}
		fetched++
		if u, err := d.User(ctx, api, id); err == nil {
			out[id] = u
		}
	}
	return out
}

// Everyone returns the workspace's users, read at most Pages pages and
// kept ListTTL; complete says all were read.
func (d *Directory) Everyone(ctx context.Context, api *slack.Client) (users []slack.User, complete bool, err error) {
	if s, ok := d.all.Get("all"); ok {
		return s.users, s.complete, nil
	}
	cursor := ""
	for range Pages {
		p := api.GetUsersPaginated(slack.GetUsersOptionLimit(200))
		p.Cursor = cursor
		p, err = p.Next(ctx)
		if err != nil {
			return nil, false, err
		}
		users = append(users, p.Users...)
		if p.Cursor == "" {
			complete = true
			break
		}
		cursor = p.Cursor
	}
	d.Remember(users...)
	d.all.Add("all", snapshot{users, complete})
	return users, complete, nil
}

// ChannelNamed returns the id of the channel named name among those of
// types that token (whose client api is) sees, walking conversations.list
// (at most Pages pages) on a miss.
func (d *Directory) ChannelNamed(ctx context.Context, api *slack.Client, token, name string, types []string) (string, error) {
	key := digest(token)
	if m, ok := d.channels.Get(key); ok {
		if id, ok := m[name]; ok {
			return id, nil
		}
	}
	m := map[string]string{}
	cursor := ""
	for range Pages {
		chans, next, err := api.GetConversationsContext(ctx, &slack.GetConversationsParameters{Cursor: cursor, Limit: 1000, Types: types})
		if err != nil {
			return "", err
		}
		for _, ch := range chans {
			m[ch.Name] = ch.ID
		}
		if next == "" {
			break
		}
		cursor = next
	}
	d.channels.Add(key, m)
	if id, ok := m[name]; ok {
		return id, nil
	}
	return "", legate.Errorf(legate.CodeNotFound, "slack: no channel #%s that this token can see: check the name with list_channels (a private channel needs include_private and the token's account in it)", name)
}

// Person resolves a user given as @handle (or a name), a user id or an
// e-mail.
func (d *Directory) Person(ctx context.Context, api *slack.Client, in string) (slack.User, error) {
	in = strings.TrimSpace(in)
	switch {
	case UserID.MatchString(in):
		return d.User(ctx, api, in)
	case strings.Contains(strings.TrimPrefix(in, "@"), "@"):
		u, err := api.GetUserByEmailContext(ctx, in)
		var se slack.SlackErrorResponse
		if errors.As(err, &se) && se.Err == "users_not_found" {
			return slack.User{}, legate.Errorf(legate.CodeNotFound, "slack: no user with the e-mail %s", in)
		} else if err != nil {
			return slack.User{}, err
		}
		d.Remember(*u)
		return *u, nil
	}
	found, complete, err := d.Find(ctx, api, in)
	if err != nil {
		return slack.User{}, err
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return slack.User{}, legate.Errorf(legate.CodeInvalidArgument, "slack: %q names %d users: call find_user to see them, then pass the user id (U…)", in, len(found))
	}
	msg := "slack: no user %q: find_user searches by name; an e-mail or a user id (U…) names one exactly"
	if !complete {
		msg += " (the directory was read only in part: pass the user id or e-mail)"
	}
	return slack.User{}, legate.Errorf(legate.CodeNotFound, msg, in)
}

// Find returns the users that answer to q (see Match): the exact matches
// when there are any, else the partial ones; deleted users never.
func (d *Directory) Find(ctx context.Context, api *slack.Client, q string) (found []slack.User, complete bool, err error) {
	users, complete, err := d.Everyone(ctx, api)
	if err != nil {
		return nil, false, err
	}
	var exact, partial []slack.User
	for _, u := range users {
		if u.Deleted {
			continue
		}
		e, p := Match(u, q)
		if e {
			exact = append(exact, u)
		} else if p {
			partial = append(partial, u)
		}
	}
	if len(exact) > 0 {
		return exact, complete, nil
	}
	return partial, complete, nil
}

// OpenDM returns the DM channel with user (conversations.open).
func OpenDM(ctx context.Context, api *slack.Client, user string) (string, error) {
	ch, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}, ReturnIM: true})
	if err != nil {
		return "", err
	}
	if ch == nil || ch.ID == "" {
		return "", &legate.Error{Code: legate.CodeAdapterMapping, Message: "slack: conversations.open answered without a channel"}
	}
	return ch.ID, nil
}

// DisplayName is how a person is named in a result: the display name,
// else the real name, else the handle.
func DisplayName(u slack.User) string {
	switch {
	case u.Profile.DisplayName != "":
		return u.Profile.DisplayName
	case u.RealName != "":
		return u.RealName
	}
	return u.Name
}

// Match reports whether u answers to q exactly (its handle, display or
// real name, or e-mail, case aside) or in part (one of them, or a word of
// one, starts with q).
func Match(u slack.User, q string) (exact, partial bool) {
	q = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(q), "@"))
	for _, n := range []string{u.Name, u.RealName, u.Profile.DisplayName, u.Profile.RealName, u.Profile.Email} {
		n = strings.ToLower(n)
		if n == "" {
			continue
		}
		exact = exact || n == q
		partial = partial || strings.HasPrefix(n, q)
		for _, w := range strings.Fields(n) {
			partial = partial || strings.HasPrefix(w, q)
		}
	}
	return exact, partial || exact
}
