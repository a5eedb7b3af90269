package notion

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
)

// A write whose answer was lost may have happened: before writing again,
// Find reads back what the earlier attempt would have made. With markers
// off (the default) it matches content, time and author: a page of the
// same title created since the first attempt by the integration's own bot
// user whose first block is the content's; blocks at the end of the
// parent that are the ones appended, created since, by the bot; a comment
// of the same text. With markers on, the write carries a marker (a gray
// paragraph "legate-operation: lg1-…" after a page's content or the
// appended blocks, a gray run ending a comment) and Find matches it.

// The marker a write carries when markers are on.
const markerPrefix = "legate-operation: "

func markerText(marker string) string { return markerPrefix + marker }

// markerBlock is the block that carries marker.
func markerBlock(marker string) newBlock {
	b := textBlock("paragraph", markerText(marker))
	b.Body.Color = "gray"
	return b
}

// findPages bounds the pages of a listing read looking for a lost write,
// and findCandidates the pages of the same title whose content is read.
const (
	findPages      = 10
	findCandidates = 20
)

func lostTrack() error {
	return legate.Errorf(legate.CodeConflict, "notion: cannot tell whether an earlier attempt wrote: more than %d pages of results, or %d pages of the same title, to read; check the page before calling again with a new idempotency key", findPages, findCandidates)
}

// botID is the id of the integration's bot user for token (GET
// /v1/users/me), read once per token.
func (c *Connector) botID(ctx context.Context, token string) (string, error) {
	key := sha256.Sum256([]byte(token))
	if id, ok := c.bots.Load(key); ok {
		return id.(string), nil
	}
	var me apiUser
	if err := c.send(ctx, token, request{method: http.MethodGet, path: "users/me"}, &me); err != nil {
		return "", err
	}
	c.bots.Store(key, me.ID)
	return me.ID, nil
}

// signature is what Find compares of a block: its type and text.
type signature struct{ typ, text string }

func signatures(blocks []newBlock) []signature {
	out := make([]signature, len(blocks))
	for i, b := range blocks {
		out[i] = signature{b.Type, b.text()}
	}
	return out
}

// mine reports whether a block was created since since by the bot.
func mine(b *apiBlock, since time.Time, bot string) bool {
	return !b.CreatedTime.Before(since) && (b.CreatedBy.ID == "" || b.CreatedBy.ID == bot)
}

// eachChild calls visit with every block under id, reading at most
// findPages pages of 100; a longer listing is lostTrack.
func (c *Connector) eachChild(ctx context.Context, token, id string, visit func(b *apiBlock)) error {
	cursor := ""
	for range findPages {
		q := url.Values{"page_size": {"100"}}
		if cursor != "" {
			q.Set("start_cursor", cursor)
		}
		var l list[apiBlock]
		if err := c.send(ctx, token, request{method: http.MethodGet, path: "blocks/" + id + "/children", query: q}, &l); err != nil {
			return err
		}
		for i := range l.Results {
			visit(&l.Results[i])
		}
		if cursor = l.next(); cursor == "" {
			return nil
		}
	}
	return lostTrack()
}

// lastRun is the last run of blocks matching want in all, each created
// since since by bot, nil when there is none.
func lastRun(all []*apiBlock, want []signature, since time.Time, bot string) []*apiBlock {
	for start := len(all) - len(want); start >= 0; start-- {
		ok := true
		for i, w := range want {
			b := all[start+i]
			if b.Type != w.typ || b.text() != w.text || !mine(b, since, bot) {
				ok = false
				break
			}
		}
		if ok {
			return all[start : start+len(want)]
		}
	}
	return nil
}

// findAppended looks for blocks appended under parent since since: the
// last run of blocks like blocks (followed by the marker's, when markers
// are on).
func (c *Connector) findAppended(ctx context.Context, token, parent string, blocks []newBlock, marker string, since time.Time) ([]*apiBlock, error) {
	bot, err := c.botID(ctx, token)
	if err != nil {
		return nil, err
	}
	var all []*apiBlock
	if err := c.eachChild(ctx, token, parent, func(b *apiBlock) { all = append(all, b) }); err != nil {
		return nil, err
	}
	want := signatures(c.withMarker(blocks, marker))
	run := lastRun(all, want, since, bot)
	if run == nil {
		return nil, nil
	}
	return run[:len(blocks)], nil
}

// withMarker is blocks followed by marker's block when markers are on.
func (c *Connector) withMarker(blocks []newBlock, marker string) []newBlock {
	if !c.kit.Markers() {
		return blocks
	}
	return append(blocks[:len(blocks):len(blocks)], markerBlock(marker))
}

// newPage is a page create_page makes: what Find compares.
type newPage struct {
	parentKind, parent string // kindPage or kindDataSource, and its id
	title              string
	content            []newBlock
}

// findCreated looks for the page np created since since by the bot: a
// page of its title under its parent whose content starts as np's (and
// holds marker's block, when markers are on).
func (c *Connector) findCreated(ctx context.Context, token string, np newPage, marker string, since time.Time) (*apiPage, error) {
	bot, err := c.botID(ctx, token)
	if err != nil {
		return nil, err
	}
	var candidates []string
	if np.parentKind == kindDataSource {
		candidates, err = c.createdRows(ctx, token, np, since, bot)
	} else {
		err = c.eachChild(ctx, token, np.parent, func(b *apiBlock) {
			if b.Type == "child_page" && b.Body.Title == np.title && mine(b, since, bot) {
				candidates = append(candidates, b.ID)
			}
		})
	}
	if err != nil {
		return nil, err
	}
	if len(candidates) > findCandidates {
		return nil, lostTrack()
	}
	want := signatures(c.withMarker(np.content, marker))
	for _, id := range candidates {
		ok, err := c.startsWith(ctx, token, id, want)
		if err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		var pg apiPage
		err = c.send(ctx, token, request{method: http.MethodGet, path: "pages/" + id}, &pg)
		return &pg, err
	}
	return nil, nil
}

// createdRows are the ids of the pages of np's title created in its data
// source since since by bot.
func (c *Connector) createdRows(ctx context.Context, token string, np newPage, since time.Time, bot string) ([]string, error) {
	body := map[string]any{
		"filter": map[string]any{"and": []any{
			map[string]any{"timestamp": "created_time", "created_time": map[string]any{"on_or_after": since.UTC().Format(time.RFC3339)}},
			map[string]any{"property": "title", "title": map[string]any{"equals": np.title}},
		}},
		"sorts":     []any{map[string]any{"timestamp": "created_time", "direction": "descending"}},
		"page_size": 100,
	}
	var ids []string
	for range findPages {
		var l list[apiPage]
		if err := c.send(ctx, token, request{method: http.MethodPost, path: "data_sources/" + np.parent + "/query", body: body}, &l); err != nil {
			return nil, err
		}
		for _, p := range l.Results {
			if pageTitle(p.Properties) == np.title && (p.CreatedBy.ID == "" || string(p.CreatedBy.ID) == bot) {
				ids = append(ids, string(p.ID))
			}
		}
		if l.next() == "" {
			return ids, nil
		}
		body["start_cursor"] = l.next()
	}
	return nil, lostTrack()
}

// startsWith reports whether page id's first blocks are want.
func (c *Connector) startsWith(ctx context.Context, token, id string, want []signature) (bool, error) {
	if len(want) == 0 {
		return true, nil
	}
	var l list[apiBlock]
	q := url.Values{"page_size": {"100"}}
	if err := c.send(ctx, token, request{method: http.MethodGet, path: "blocks/" + id + "/children", query: q}, &l); err != nil {
		return false, err
	}
	if len(l.Results) < len(want) {
		return false, nil
	}
	for i, w := range want {
		if l.Results[i].Type != w.typ || l.Results[i].text() != w.text {
			return false, nil
		}
	}
	return true, nil
}

// findComment looks for the comment with text (ending with marker's run,
// when markers are on) made on block id since since by the bot, in the
// discussion when one is given.
func (c *Connector) findComment(ctx context.Context, token, block, discussion, text, marker string, since time.Time) (*apiComment, error) {
	bot, err := c.botID(ctx, token)
	if err != nil {
		return nil, err
	}
	want := plainText(c.commentText(text, marker))
	cursor := ""
	for range findPages {
		q := url.Values{"block_id": {block}, "page_size": {"100"}}
		if cursor != "" {
			q.Set("start_cursor", cursor)
		}
		var l list[apiComment]
		if err := c.send(ctx, token, request{method: http.MethodGet, path: "comments", query: q}, &l); err != nil {
			return nil, err
		}
		for i := range l.Results {
			cm := &l.Results[i]
			if plainText(cm.RichText) == want && !cm.CreatedTime.Before(since) && cm.CreatedBy.ID == bot &&
				(discussion == "" || strings.EqualFold(cm.DiscussionID, discussion)) {
				return cm, nil
			}
		}
		if cursor = l.next(); cursor == "" {
			return nil, nil
		}
	}
	return nil, lostTrack()
}

// commentText is a comment's rich text: inline Markdown, then marker's
// gray run when markers are on.
func (c *Connector) commentText(text, marker string) []richRun {
	rt := inline(text, annotations{}, "")
	if c.kit.Markers() {
		rt = append(rt, splitRun(" "+markerText(marker), &annotations{Color: "gray"}, "")...)
	}
	return rt
}
