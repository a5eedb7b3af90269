package notion

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/readback"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

type appendBlockIn struct {
	Parent  string `json:"parent" jsonschema:"the page (or block) to append to: a ref from search, query_database, create_page or append_block, a Notion id, or a URL"`
	Type    string `json:"type,omitempty" jsonschema:"paragraph (the default), heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote or code"`
	Text    string `json:"text" jsonschema:"the block's text, plain"`
	Checked bool   `json:"checked,omitempty" jsonschema:"for a to_do: whether it is checked"`
}

type appendMarkdownIn struct {
	Parent   string `json:"parent" jsonschema:"the page (or block) to append to: a ref, a Notion id, or a URL"`
	Markdown string `json:"markdown" jsonschema:"the content to add, as Markdown: # headings, - bullets, 1. numbered items, - [ ] to-dos, > quotes, code fences with a language, --- dividers, **bold**, _italic_, ~~strike~~, code and [links](https://…)"`
}

// Appended is what append_markdown returns: the blocks added, in order.
type Appended struct {
	ParentRef string        `json:"parent_ref" jsonschema:"ref of the page or block appended to"`
	Blocks    []model.Block `json:"blocks"`
}

// blockTypes are the types append_block makes.
var blockTypes = []string{"paragraph", "heading_1", "heading_2", "heading_3", "bulleted_list_item", "numbered_list_item", "to_do", "quote", "code"}

func (c *Connector) appendBlock(ctx context.Context, call *connectors.Call, in *appendBlockIn) (*legate.Result, error) {
	typ := in.Type
	switch {
	case typ == "":
		typ = "paragraph"
	case !slices.Contains(blockTypes, typ):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: type: one of %s; got %q", strings.Join(blockTypes, ", "), in.Type)
	}
	if in.Checked && typ != "to_do" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: checked: only a to_do is checked")
	}
	if err := checkText("text", in.Text, MaxTextRunes); err != nil {
		return nil, err
	}
	b := md.TextBlock(typ, in.Text)
	if typ == "to_do" {
		b.Body.Checked = &in.Checked
	}
	out, err := c.appendBlocks(ctx, call, in.Parent, []md.NewBlock{b})
	if err != nil {
		return nil, err
	}
	m := out.Blocks[0]
	return &legate.Result{Structured: m, Text: fmt.Sprintf("appended a %s: %s", m.Type, m.Text)}, nil
}

func (c *Connector) appendMarkdown(ctx context.Context, call *connectors.Call, in *appendMarkdownIn) (*legate.Result, error) {
	blocks, err := c.contentBlocks("markdown", in.Markdown, true)
	if err != nil {
		return nil, err
	}
	out, err := c.appendBlocks(ctx, call, in.Parent, blocks)
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("appended %d block(s)", len(out.Blocks))}, nil
}

// appendBlocks appends blocks at the end of parent, at most once per
// idempotency key.
func (c *Connector) appendBlocks(ctx context.Context, call *connectors.Call, ref string, blocks []md.NewBlock) (*Appended, error) {
	kind, parent, err := c.resolve(call, "parent", ref, kindPage, kindBlock)
	if err != nil {
		return nil, err
	}
	if kind == "" {
		kind = kindPage // a native id or URL: a page's, most often; either takes blocks
	}
	parentRef := c.kit.Ref(call, kind, parent)
	convert := func(run []*md.Block) (*Appended, error) {
		out := &Appended{ParentRef: parentRef, Blocks: make([]model.Block, 0, len(run))}
		for _, b := range run {
			m, err := c.blockOf(call, parentRef, b)
			if err != nil {
				return nil, err
			}
			out.Blocks = append(out.Blocks, m)
		}
		return out, nil
	}
	return saas.WriteOnce(ctx, c.kit, call, saas.Write[Appended]{
		Send: func(ctx context.Context, token, marker string) (*Appended, error) {
			sent := time.Now().Add(-saas.FindSkew)
			var l rest.List[md.Block]
			body := map[string]any{"children": c.find.WithMarker(blocks, marker)}
			if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodPatch, Path: "blocks/" + parent + "/children", Body: body}, &l); err != nil {
				return nil, err
			}
			results := make([]*md.Block, len(l.Results))
			for i := range l.Results {
				results[i] = &l.Results[i]
			}
			// The answer lists the new blocks; an older API's lists the
			// parent's first children instead: then look them up.
			run := readback.LastRun(results, readback.Signatures(c.find.WithMarker(blocks, marker)), time.Time{}, "")
			if run == nil {
				found, err := c.find.Appended(ctx, token, parent, blocks, marker, sent)
				if err != nil {
					return nil, err
				}
				if found == nil {
					return nil, saas.Mapping("notion", "the appended blocks are neither in the answer nor under their parent")
				}
				run = found
			}
			return convert(run[:len(blocks)])
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*Appended, error) {
			run, err := c.find.Appended(ctx, token, parent, blocks, marker, since)
			if err != nil || run == nil {
				return nil, err
			}
			return convert(run)
		},
	})
}

// checkText refuses an empty text or one over max characters.
func checkText(field, s string, max int) error {
	switch n := len([]rune(s)); {
	case strings.TrimSpace(s) == "":
		return legate.Errorf(legate.CodeInvalidArgument, "notion: %s: must not be empty", field)
	case n > max:
		return legate.Errorf(legate.CodeInvalidArgument, "notion: %s: at most %d characters, got %d", field, max, n)
	}
	return nil
}
