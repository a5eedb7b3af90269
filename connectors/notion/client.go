package notion

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// exchange is what the transport saw of an attempt's last answer:
// notionapi keeps neither the status of an answer whose body is not
// Notion's error JSON nor the Retry-After of a 429.
type exchange struct {
	status     int
	retryAfter time.Duration
}

type exchangeKey struct{}

// errorBodyBytes bounds what the transport keeps of a failed answer.
const errorBodyBytes = 64 << 10

// transport sends notionapi's requests, made for https://api.notion.com,
// to the configured base URL, and records failed answers in the request
// context's exchange.
type transport struct {
	base *url.URL
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.base == nil || t.base.Host == "" {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: base_url: not a URL")
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.base.Scheme, t.base.Host, ""
	if prefix := strings.TrimSuffix(t.base.Path, "/"); prefix != "" {
		r.URL.Path = prefix + req.URL.Path
		r.URL.RawPath = ""
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		ex.status = resp.StatusCode
		ex.retryAfter, _ = netguard.RetryAfter(resp.Header, time.Now())
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	// notionapi never closes a failed answer's body (and leaves a 429's
	// unread): keep a bounded copy and give the connection back.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// mapError makes an error of notionapi canonical, with what the
// transport saw of the answer. ctx is the attempt's.
func mapError(ctx context.Context, ex *exchange, err error) error {
	var le *legate.Error
	var ne *notionapi.Error
	var rl *notionapi.RateLimitedError
	switch {
	case errors.As(err, &le):
		return le // the connector's own: a refused argument, lostTrack
	case errors.As(err, &rl):
		return saas.RateLimited("notion", ex.retryAfter)
	case errors.As(err, &ne) && (ne.Status >= 400 || ex.status >= 400):
		status := ne.Status
		if status < 400 {
			status = ex.status
		}
		msg := "Notion answered " + strconv.Itoa(status)
		if ne.Code != "" {
			msg += " " + string(ne.Code)
		}
		if ne.Message != "" {
			msg += ": " + ne.Message
		}
		return saas.StatusError("notion", status, ex.retryAfter, msg)
	case ex.status >= 400:
		// A failed answer whose body is not Notion's error (a proxy's
		// HTML page): its status says what happened.
		return saas.StatusError("notion", ex.status, ex.retryAfter, "Notion answered "+strconv.Itoa(ex.status))
	case ex.status == http.StatusOK && !cutShort(ctx, err):
		// An answer that came whole but that notionapi could not read
		// (an object type it does not know).
		return saas.Mapping("notion", "%v", err)
	}
	return saas.Classify(ctx, err, "notion")
}

// cutShort reports whether err is an answer's body that did not arrive
// whole: the connection broke, or the attempt's time ran out.
func cutShort(ctx context.Context, err error) bool {
	var ne net.Error
	return ctx.Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &ne)
}

// The kinds of the refs the connector hands out.
const (
	kindPage     = "page"
	kindDatabase = "database"
	kindBlock    = "block"
)

// The marker a write ends with: a paragraph block of this text, in gray.
const markerPrefix = "legate-operation: "

func markerText(marker string) string { return markerPrefix + marker }

func isMarker(b notionapi.Block) bool {
	return b.GetType() == notionapi.BlockTypeParagraph && strings.HasPrefix(b.GetRichTextString(), markerPrefix)
}

// markerBlock is the block that carries marker.
func markerBlock(marker string) notionapi.Block {
	return &notionapi.ParagraphBlock{
		BasicBlock: notionapi.BasicBlock{Object: notionapi.ObjectTypeBlock, Type: notionapi.BlockTypeParagraph},
		Paragraph:  notionapi.Paragraph{RichText: richText(markerText(marker)), Color: "gray"},
	}
}

// richRun is the longest text of one rich-text run Notion takes.
const richRun = 2000

// richText is text as rich-text runs of at most richRun characters.
func richText(text string) []notionapi.RichText {
	var out []notionapi.RichText
	runes := []rune(text)
	for len(runes) > 0 {
		n := min(len(runes), richRun)
		out = append(out, notionapi.RichText{Type: notionapi.ObjectTypeText, Text: &notionapi.Text{Content: string(runes[:n])}})
		runes = runes[n:]
	}
	if out == nil {
		out = []notionapi.RichText{}
	}
	return out
}

func plainText(rt []notionapi.RichText) string {
	var b strings.Builder
	for _, r := range rt {
		if r.PlainText == "" && r.Text != nil {
			b.WriteString(r.Text.Content)
			continue
		}
		b.WriteString(r.PlainText)
	}
	return b.String()
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

// children lists the blocks under id, at most findPages pages of 100,
// calling visit with each until it returns true. It reports whether a
// visit returned true; a listing longer than the bound is lostTrack.
func children(ctx context.Context, api *notionapi.Client, id string, visit func(b notionapi.Block) bool) (bool, error) {
	cursor := notionapi.Cursor("")
	for range findPages {
		res, err := api.Block.GetChildren(ctx, notionapi.BlockID(id), &notionapi.Pagination{StartCursor: cursor, PageSize: 100})
		if err != nil {
			return false, err
		}
		for _, b := range res.Results {
			if visit(b) {
				return true, nil
			}
		}
		if !res.HasMore || res.NextCursor == "" {
			return false, nil
		}
		cursor = notionapi.Cursor(res.NextCursor)
	}
	return false, lostTrack()
}

// hasMarkerChild reports whether page id's content holds marker's block.
// A created page's marker is among its first 100 blocks.
func hasMarkerChild(ctx context.Context, api *notionapi.Client, id, marker string) (bool, error) {
	res, err := api.Block.GetChildren(ctx, notionapi.BlockID(id), &notionapi.Pagination{PageSize: 100})
	if err != nil {
		return false, err
	}
	for _, b := range res.Results {
		if isMarker(b) && b.GetRichTextString() == markerText(marker) {
			return true, nil
		}
	}
	return false, nil
}

// findCreatedPage looks for the page with marker created under parent (a
// page or a database) since since, titled title.
func findCreatedPage(ctx context.Context, api *notionapi.Client, parentKind, parent, title, marker string, since time.Time) (*notionapi.Page, error) {
	var candidates []string
	checked := 0
	// isOurs reads the content of page id, one of the candidates.
	isOurs := func(id string) (bool, error) {
		if checked++; checked > findCandidates {
			return false, lostTrack()
		}
		return hasMarkerChild(ctx, api, id, marker)
	}
	if parentKind == kindDatabase {
		after := notionapi.Date(since)
		req := &notionapi.DatabaseQueryRequest{
			Filter:   notionapi.TimestampFilter{Timestamp: notionapi.TimestampCreated, CreatedTime: &notionapi.DateFilterCondition{OnOrAfter: &after}},
			Sorts:    []notionapi.SortObject{{Timestamp: notionapi.TimestampCreated, Direction: notionapi.SortOrderDESC}},
			PageSize: 100,
		}
		for i := 0; ; i++ {
			if i == findPages {
				return nil, lostTrack()
			}
			res, err := api.Database.Query(ctx, notionapi.DatabaseID(parent), req)
			if err != nil {
				return nil, err
			}
			for _, p := range res.Results {
				if pageTitle(p.Properties) == title {
					ok, err := isOurs(string(p.ID))
					if err != nil {
						return nil, err
					}
					if ok {
						return &p, nil
					}
				}
			}
			if !res.HasMore || res.NextCursor == "" {
				return nil, nil
			}
			req.StartCursor = res.NextCursor
		}
	}
	_, err := children(ctx, api, parent, func(b notionapi.Block) bool {
		cp, ok := b.(*notionapi.ChildPageBlock)
		if ok && cp.ChildPage.Title == title && (cp.CreatedTime == nil || !cp.CreatedTime.Before(since)) {
			candidates = append(candidates, string(cp.ID))
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	for _, id := range candidates {
		ok, err := isOurs(id)
		if err != nil {
			return nil, err
		}
		if ok {
			return api.Page.Get(ctx, notionapi.PageID(id))
		}
	}
	return nil, nil
}

// findAppended looks for the block appended under parent with marker: the
// block just before the marker's.
func findAppended(ctx context.Context, api *notionapi.Client, parent, marker string) (notionapi.Block, error) {
	var prev notionapi.Block
	hit, err := children(ctx, api, parent, func(b notionapi.Block) bool {
		if isMarker(b) && b.GetRichTextString() == markerText(marker) {
			return true
		}
		prev = b
		return false
	})
	switch {
	case err != nil || !hit:
		return nil, err
	case prev == nil:
		return nil, saas.Mapping("notion", "the marker of an append is the first block of its parent")
	}
	return prev, nil
}
