package notion

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// Limits of read_page.
const (
	// The top-level blocks read per call.
	DefaultReadBlocks, MaxReadBlocks = 50, 100
	// MaxReadTotal bounds the blocks of one call, nested ones included,
	// and MaxReadBytes its Markdown.
	MaxReadTotal = 1000
	MaxReadBytes = 64 << 10
	// MaxReadDepth bounds the nesting read under a top-level block.
	MaxReadDepth = 8
)

type readPageIn struct {
	saas.Page
	PageRef string `json:"page" jsonschema:"the page: a ref from search or query_database, a Notion page id, or its URL"`
}

// PageContent is what read_page returns: the page, its properties as
// plain values, and its content as Markdown, one part at a time.
type PageContent struct {
	Page       model.Page `json:"page"`
	Markdown   string     `json:"markdown" jsonschema:"the content read, as Markdown: nested blocks (list items, toggles, columns) indented under their parent"`
	Blocks     int        `json:"blocks" jsonschema:"how many blocks were read, nested ones included"`
	Truncated  bool       `json:"truncated,omitempty" jsonschema:"the content was cut at the connector's limit; pass next_cursor as cursor for the rest"`
	NextCursor string     `json:"next_cursor,omitempty" jsonschema:"pass it as cursor to read on; absent when the page is read to its end"`
}

// reader renders blocks as Markdown within read_page's bounds.
type reader struct {
	c      *Connector
	token  string
	blocks int
	out    strings.Builder
	full   bool // a bound was reached
}

func (c *Connector) readPage(ctx context.Context, call *connectors.Call, in *readPageIn) (*legate.Result, error) {
	_, id, err := c.resolve(call, "page", in.PageRef, kindPage)
	if err != nil {
		return nil, err
	}
	p, err := c.kit.Open(call, in.Page, DefaultReadBlocks, MaxReadBlocks)
	if err != nil {
		return nil, err
	}
	var out PageContent
	var by rest.User // who created the page
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		var pg rest.Page
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "pages/" + id}, &pg); err != nil {
			return err
		}
		by = pg.CreatedBy
		if out.Page, err = c.pageOf(call, &pg); err != nil {
			return err
		}
		r := &reader{c: c, token: token}
		next, err := r.top(ctx, id, p)
		out.Markdown, out.Blocks, out.Truncated = r.out.String(), r.blocks, r.full
		out.NextCursor = c.kit.Cursor(call, next)
		return err
	})
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s (%d blocks)\n\n%s", pageText(out.Page), out.Blocks, out.Markdown)
	if out.NextCursor != "" {
		text += "\n\nmore: the content goes on; pass next_cursor as cursor to read the rest"
	}
	return &legate.Result{Structured: out, Text: text, Meta: provenance.Author(cmp.Or(by.Name, by.ID))}, nil
}

// children lists one page of the blocks under id.
func (r *reader) children(ctx context.Context, id, cursor string, size int) (*rest.List[md.Block], error) {
	q := url.Values{"page_size": {strconv.Itoa(size)}}
	if cursor != "" {
		q.Set("start_cursor", cursor)
	}
	var l rest.List[md.Block]
	err := r.c.api.Send(ctx, r.token, rest.Request{Method: http.MethodGet, Path: "blocks/" + id + "/children", Query: q}, &l)
	return &l, err
}

// top renders one page of page id's top-level blocks, and returns the
// start cursor of the rest ("" at the end). A top-level block that does
// not fit in the bounds is left for the next call, unless it is the
// first: then it is cut.
func (r *reader) top(ctx context.Context, id string, p saas.Paging) (string, error) {
	l, err := r.children(ctx, id, p.Token, p.Size)
	if err != nil {
		return "", err
	}
	number := 0
	for i, b := range l.Results {
		mark, blocks := r.out.Len(), r.blocks
		number = counted(number, &b)
		if err := r.block(ctx, &b, 0, number); err != nil {
			return "", err
		}
		if r.full {
			if i == 0 {
				r.out.WriteString("\n… (cut: this block's content goes on past the limit)\n")
			} else {
				s := r.out.String()[:mark]
				r.out.Reset()
				r.out.WriteString(s)
				r.blocks = blocks
				return b.ID, nil
			}
			if i+1 < len(l.Results) {
				return l.Results[i+1].ID, nil
			}
			return l.Next(), nil
		}
	}
	return l.Next(), nil
}

// block renders b at depth and, within the bounds, its children.
func (r *reader) block(ctx context.Context, b *md.Block, depth, number int) error {
	r.blocks++
	if r.blocks > MaxReadTotal || r.out.Len() > MaxReadBytes {
		r.full = true
		return nil
	}
	indent := strings.Repeat("  ", depth)
	r.out.WriteString(indent + md.RenderBlock(b, number, indent) + "\n")
	if !b.HasChildren || b.Type == "child_page" || b.Type == "child_database" {
		return nil
	}
	if depth+1 >= MaxReadDepth {
		r.out.WriteString(indent + "  … (nested deeper than the connector reads)\n")
		return nil
	}
	cursor, number := "", 0
	for {
		l, err := r.children(ctx, b.ID, cursor, 100)
		if err != nil {
			return err
		}
		for i := range l.Results {
			number = counted(number, &l.Results[i])
			if err := r.block(ctx, &l.Results[i], depth+1, number); err != nil || r.full {
				return err
			}
		}
		if cursor = l.Next(); cursor == "" {
			return nil
		}
	}
}

// counted is the number of b after a numbered list item numbered n (0
// for none): the next number for a numbered item, 0 for another block.
func counted(n int, b *md.Block) int {
	if b.Type != "numbered_list_item" {
		return 0
	}
	return n + 1
}
