// Package readback finds what a write of the notion connector did when
// its answer was lost, so that the write is not done twice.
package readback

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
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
func markerBlock(marker string) md.NewBlock {
	b := md.TextBlock("paragraph", markerText(marker))
	b.Body.Color = "gray"
	return b
}

// findPages bounds the pages of a listing read looking for a lost write,
// and findCandidates the pages of the same title whose content is read.
const (
	findPages      = 10
	findCandidates = 20
)

func LostTrack() error {
	return legate.Errorf(legate.CodeConflict, "notion: cannot tell whether an earlier attempt wrote: more than %d pages of results, or %d pages of the same title, to read; check the page before calling again with a new idempotency key", findPages, findCandidates)
}

// Finder reads back writes through API. Markers says writes carry their
// marker (the instance's markers option).
type Finder struct {
	API     *rest.Client
	Markers bool
	bots    sync.Map // sha256 of a token → its bot user's id
}

// BotID is the id of the integration's bot user for token (GET
// /v1/users/me), read once per token.
func (f *Finder) BotID(ctx context.Context, token string) (string, error) {
	key := sha256.Sum256([]byte(token))
	if id, ok := f.bots.Load(key); ok {
		return id.(string), nil
	}
	var me rest.User
	if err := f.API.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "users/me"}, &me); err != nil {
		return "", err
	}
	f.bots.Store(key, me.ID)
	return me.ID, nil
}

// Signature is what a Finder compares of a block: its type and text.
type Signature struct{ typ, text string }

func Signatures(blocks []md.NewBlock) []Signature {
	out := make([]Signature, len(blocks))
	for i, b := range blocks {
		out[i] = Signature{b.Type, b.Text()}
	}
	return out
}

// mine reports whether a block was created since since by the bot (by
// anyone when bot is "").
func mine(b *md.Block, since time.Time, bot string) bool {
	return !b.CreatedTime.Before(since) && (bot == "" || b.CreatedBy.ID == "" || b.CreatedBy.ID == bot)
}

// eachChild calls visit with every block under id, reading at most
// findPages pages of 100; a longer listing is LostTrack.
func (f *Finder) eachChild(ctx context.Context, token, id string, visit func(b *md.Block)) error {
	cursor := ""
	for range findPages {
		q := url.Values{"page_size": {"100"}}
		if cursor != "" {
			q.Set("start_cursor", cursor)
		}
		var l rest.List[md.Block]
		if err := f.API.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "blocks/" + id + "/children", Query: q}, &l); err != nil {
			return err
		}
		for i := range l.Results {
			visit(&l.Results[i])
		}
		if cursor = l.Next(); cursor == "" {
			return nil
		}
	}
	return LostTrack()
}

// LastRun is the last run of blocks matching want in all, each created
// since since by bot, nil when there is none.
func LastRun(all []*md.Block, want []Signature, since time.Time, bot string) []*md.Block {
	for start := len(all) - len(want); start >= 0; start-- {
		ok := true
		for i, w := range want {
			b := all[start+i]
			if b.Type != w.typ || b.Text() != w.text || !mine(b, since, bot) {
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

// Appended looks for blocks appended under parent since since: the
// last run of blocks like blocks (followed by the marker's, when markers
// are on).
func (f *Finder) Appended(ctx context.Context, token, parent string, blocks []md.NewBlock, marker string, since time.Time) ([]*md.Block, error) {
	bot, err := f.BotID(ctx, token)
	if err != nil {
		return nil, err
	}
	var all []*md.Block
	if err := f.eachChild(ctx, token, parent, func(b *md.Block) { all = append(all, b) }); err != nil {
		return nil, err
	}
	want := Signatures(f.WithMarker(blocks, marker))
	run := LastRun(all, want, since, bot)
	if run == nil {
		return nil, nil
	}
	return run[:len(blocks)], nil
}

// WithMarker is blocks followed by marker's block when markers are on.
func (f *Finder) WithMarker(blocks []md.NewBlock, marker string) []md.NewBlock {
	if !f.Markers {
		return blocks
	}
	return append(blocks[:len(blocks):len(blocks)], markerBlock(marker))
}

// NewPage is a page create_page makes: what Find compares.
type NewPage struct {
	InDataSource bool   // Parent is a data source, else a page
	Parent       string // its id
	Title        string
	Content      []md.NewBlock
}

// Created looks for the page np created since since by the bot: a
// page of its title under its parent whose content starts as np's (and
// holds marker's block, when markers are on).
func (f *Finder) Created(ctx context.Context, token string, np NewPage, marker string, since time.Time) (*rest.Page, error) {
	bot, err := f.BotID(ctx, token)
	if err != nil {
		return nil, err
	}
	var candidates []string
	if np.InDataSource {
		candidates, err = f.createdRows(ctx, token, np, since, bot)
	} else {
		err = f.eachChild(ctx, token, np.Parent, func(b *md.Block) {
			if b.Type == "child_page" && b.Body.Title == np.Title && mine(b, since, bot) {
				candidates = append(candidates, b.ID)
			}
		})
	}
	if err != nil {
		return nil, err
	}
	if len(candidates) > findCandidates {
		return nil, LostTrack()
	}
	want := Signatures(f.WithMarker(np.Content, marker))
	for _, id := range candidates {
		ok, err := f.startsWith(ctx, token, id, want)
		if err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue
		}
		var pg rest.Page
		err = f.API.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "pages/" + id}, &pg)
		return &pg, err
	}
	return nil, nil
}

// createdRows are the ids of the pages of np's title created in its data
// source since since by bot.
func (f *Finder) createdRows(ctx context.Context, token string, np NewPage, since time.Time, bot string) ([]string, error) {
	body := map[string]any{
		"filter": map[string]any{"and": []any{
			map[string]any{"timestamp": "created_time", "created_time": map[string]any{"on_or_after": since.UTC().Format(time.RFC3339)}},
			map[string]any{"property": "title", "title": map[string]any{"equals": np.Title}},
		}},
		"sorts":     []any{map[string]any{"timestamp": "created_time", "direction": "descending"}},
		"page_size": 100,
	}
	var ids []string
	for range findPages {
		var l rest.List[rest.Page]
		if err := f.API.Send(ctx, token, rest.Request{Method: http.MethodPost, Path: "data_sources/" + np.Parent + "/query", Body: body}, &l); err != nil {
			return nil, err
		}
		for _, p := range l.Results {
			if rest.Title(p.Properties) == np.Title && (p.CreatedBy.ID == "" || string(p.CreatedBy.ID) == bot) {
				ids = append(ids, string(p.ID))
			}
		}
		if l.Next() == "" {
			return ids, nil
		}
		body["start_cursor"] = l.Next()
	}
	return nil, LostTrack()
}

// startsWith reports whether page id's first blocks are want.
func (f *Finder) startsWith(ctx context.Context, token, id string, want []Signature) (bool, error) {
	if len(want) == 0 {
		return true, nil
	}
	var l rest.List[md.Block]
	q := url.Values{"page_size": {"100"}}
	if err := f.API.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "blocks/" + id + "/children", Query: q}, &l); err != nil {
		return false, err
	}
	if len(l.Results) < len(want) {
		return false, nil
	}
	for i, w := range want {
		if l.Results[i].Type != w.typ || l.Results[i].Text() != w.text {
			return false, nil
		}
	}
	return true, nil
}

// Comment looks for the comment with text (ending with marker's run,
// when markers are on) made on block id since since by the bot, in the
// discussion when one is given.
func (f *Finder) Comment(ctx context.Context, token, block, discussion, text, marker string, since time.Time) (*rest.Comment, error) {
	bot, err := f.BotID(ctx, token)
	if err != nil {
		return nil, err
	}
	want := md.Plain(f.CommentText(text, marker))
	cursor := ""
	for range findPages {
		q := url.Values{"block_id": {block}, "page_size": {"100"}}
		if cursor != "" {
			q.Set("start_cursor", cursor)
		}
		var l rest.List[rest.Comment]
		if err := f.API.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "comments", Query: q}, &l); err != nil {
			return nil, err
		}
		for i := range l.Results {
			cm := &l.Results[i]
			if md.Plain(cm.RichText) == want && !cm.CreatedTime.Before(since) && cm.CreatedBy.ID == bot &&
				(discussion == "" || strings.EqualFold(cm.DiscussionID, discussion)) {
				return cm, nil
			}
		}
		if cursor = l.Next(); cursor == "" {
			return nil, nil
		}
	}
	return nil, LostTrack()
}

// CommentText is a comment's rich text: inline Markdown, then marker's
// gray run when markers are on.
func (f *Finder) CommentText(text, marker string) []md.Run {
	rt := md.Inline(text, md.Annotations{}, "")
	if f.Markers {
		rt = append(rt, md.SplitRun(" "+markerText(marker), &md.Annotations{Color: "gray"}, "")...)
	}
	return rt
}

// StripMarker is a comment's text without the marker run that ends it,
// when markers are on.
func StripMarker(text string) string {
	if i := strings.LastIndex(text, " "+markerPrefix+"lg1-"); i >= 0 {
		return text[:i]
	}
	return text
}
