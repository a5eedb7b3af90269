package slack

import (
	"context"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/slack-go/slack"
)

// Bounds of the caches: a user's entry lives UserTTL and is fetched again
// on a miss; the whole directory (for look-ups by name) and the channel
// names are read at most DirectoryPages pages and kept DirectoryTTL.
const (
	UserTTL        = time.Hour
	DirectoryTTL   = 15 * time.Minute
	DirectoryPages = 25
	maxUsers       = 20000
	// maxNamed bounds the users a page of messages fetches one by one to
	// name its authors; the rest keep their ids alone.
	maxNamed = 20
)

// directory is the instance's cache of Slack's users, channel names and
// tokens' own accounts, bounded and expiring.
type directory struct {
	users    *expirable.LRU[string, slack.User] // by id
	all      *expirable.LRU[string, snapshot]
	channels *expirable.LRU[string, map[string]string] // name -> id, by token digest
	selves   *expirable.LRU[string, self]              // by token digest
}

// snapshot is the directory as read: complete says every page was.
type snapshot struct {
	users    []slack.User
	complete bool
}

// self is a token's own account: the user it acts as, and its bot.
type self struct{ user, bot string }

func newDirectory() *directory {
	return &directory{
		users:    expirable.NewLRU[string, slack.User](maxUsers, nil, UserTTL),
		all:      expirable.NewLRU[string, snapshot](1, nil, DirectoryTTL),
		channels: expirable.NewLRU[string, map[string]string](64, nil, DirectoryTTL),
		selves:   expirable.NewLRU[string, self](256, nil, 24*time.Hour),
	}
}

// digest keys a cache by token without keeping the token.
func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return string(sum[:])
}

// whoAmI returns the token's own account (auth.test, once per token).
func (c *Connector) whoAmI(ctx context.Context, token string) (self, error) {
	if s, ok := c.dir.selves.Get(digest(token)); ok {
		return s, nil
	}
	auth, err := c.client(token).AuthTestContext(ctx)
	if err != nil {
		return self{}, mapError(ctx, err)
	}
	s := self{user: auth.UserID, bot: auth.BotID}
	c.dir.selves.Add(digest(token), s)
	return s, nil
}

// user returns the user of id, from the cache or users.info.
func (c *Connector) user(ctx context.Context, token, id string) (slack.User, error) {
	if u, ok := c.dir.users.Get(id); ok {
		return u, nil
	}
	u, err := c.client(token).GetUserInfoContext(ctx, id)
	if err != nil {
		return slack.User{}, mapError(ctx, err)
	}
	c.dir.users.Add(u.ID, *u)
	return *u, nil
}

// names returns the display names of the ids, fetching at most maxNamed
// unknown ones; an id Slack does not know, or one past the bound, is left
// out.
func (c *Connector) names(ctx context.Context, token string, ids []string) map[string]slack.User {
	out := map[string]slack.User{}
	fetched := 0
	for _, id := range ids {
		if _, done := out[id]; done || id == "" {
			continue
		}
		if u, ok := c.dir.users.Get(id); ok {
			out[id] = u
			continue
		}
		if fetched >= maxNamed || !strings.HasPrefix(id, "U") && !strings.HasPrefix(id, "W") {
			continue
		}
		fetched++
		if u, err := c.user(ctx, token, id); err == nil {
			out[id] = u
		}
	}
	return out
}

// everyone returns the workspace's users, read at most DirectoryPages
// pages and kept DirectoryTTL; complete says all were read.
func (c *Connector) everyone(ctx context.Context, token string) (users []slack.User, complete bool, err error) {
	if s, ok := c.dir.all.Get("all"); ok {
		return s.users, s.complete, nil
	}
	api := c.client(token)
	cursor := ""
	for range DirectoryPages {
		p := api.GetUsersPaginated(slack.GetUsersOptionLimit(200))
		p.Cursor = cursor
		p, err = p.Next(ctx)
		if err != nil {
			return nil, false, mapError(ctx, err)
		}
		users = append(users, p.Users...)
		if p.Cursor == "" {
			complete = true
			break
		}
		cursor = p.Cursor
	}
	for _, u := range users {
		c.dir.users.Add(u.ID, u)
	}
	c.dir.all.Add("all", snapshot{users, complete})
	return users, complete, nil
}

// displayName is how a person is named in a result: the display name,
// else the real name, else the handle.
func displayName(u slack.User) string {
	switch {
	case u.Profile.DisplayName != "":
		return u.Profile.DisplayName
	case u.RealName != "":
		return u.RealName
	}
	return u.Name
}

// matchUser reports whether u answers to q: its handle, display or real
// name, or e-mail, case-insensitively, whole or as a word's start.
func matchUser(u slack.User, q string) (exact, partial bool) {
	q = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(q), "@"))
	for _, n := range []string{u.Name, u.RealName, u.Profile.DisplayName, u.Profile.RealName, u.Profile.Email} {
		n = strings.ToLower(n)
		if n == "" {
			continue
		}
		if n == q {
			exact = true
		}
		for _, w := range strings.Fields(n) {
			if strings.HasPrefix(w, q) {
				partial = true
			}
		}
		if strings.HasPrefix(n, q) {
			partial = true
		}
	}
	return exact, partial || exact
}
