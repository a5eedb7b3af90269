package notion

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

type searchIn struct {
	saas.Page
	Query  string `json:"query,omitempty" jsonschema:"words to look for in titles; empty lists everything shared with the integration"`
	Object string `json:"object,omitempty" jsonschema:"what to find: page (the default) or database"`
}

type queryDatabaseIn struct {
	saas.Page
	Database      string `json:"database" jsonschema:"ref of the database, from search"`
	TitleContains string `json:"title_contains,omitempty" jsonschema:"only pages whose title contains this text"`
	EditedSince   string `json:"edited_since,omitempty" jsonschema:"only pages edited at or after this time, RFC 3339 (2026-01-31T00:00:00Z)"`
}

type createPageIn struct {
	Parent  string `json:"parent" jsonschema:"ref of the parent page or database, from search or query_database"`
	Title   string `json:"title" jsonschema:"the page's title"`
	Content string `json:"content,omitempty" jsonschema:"the page's text, plain; paragraphs are separated by blank lines"`
	// Properties are a database row's other properties.
	Properties map[string]any `json:"properties,omitempty" jsonschema:"for a page in a database: its other properties by name, as plain values: text, number, select or status option name, list of multi_select names, date (YYYY-MM-DD or RFC 3339, or start/end), checkbox true or false, url, email, phone number, list of page refs for a relation"`
}

type appendBlockIn struct {
	Parent  string `json:"parent" jsonschema:"ref of the page (or block) to append to, from search, query_database, create_page or append_block"`
	Type    string `json:"type,omitempty" jsonschema:"paragraph (the default), heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote or code"`
	Text    string `json:"text" jsonschema:"the block's text, plain"`
	Checked bool   `json:"checked,omitempty" jsonschema:"for a to_do: whether it is checked"`
}

func (c *Connector) newTools() []connectors.Tool {
	search := connectors.NewTool("search",
		fmt.Sprintf("Search the pages (page.v1) or databases (database.v1) shared with the integration by title, most recently edited first, a page of results at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultPage, MaxPage),
		legate.ClassRead, c.search)
	search.OutputSchema = searchSchema()
	return []connectors.Tool{
		search,
		connectors.Returning[saas.List[model.Page]](connectors.NewTool("query_database",
			fmt.Sprintf("List the pages (rows) of a database (page.v1, with their properties as plain values), most recently edited first, optionally only those whose title contains a text or edited since a time; limit (default %d, at most %d) and cursor.", DefaultPage, MaxPage),
			legate.ClassRead, c.queryDatabase)),
		connectors.Returning[model.Page](connectors.NewTool("create_page",
			"Create a page under a page or in a database, with a title, plain-text content and, in a database, other properties as plain values; returns it (page.v1). Retrying the same call never creates two.",
			legate.ClassWrite, c.createPage)),
		connectors.Returning[model.Block](connectors.NewTool("append_block",
			"Append one block (a paragraph, heading, list item, to-do, quote or code) at the end of a page or block; returns it (block.v1). Retrying the same call never appends two.",
			legate.ClassWrite, c.appendBlock)),
	}
}

// searchSchema is the output schema of search: a list whose items are
// page.v1 or database.v1.
func searchSchema() json.RawMessage {
	list, err := jsonschema.For[saas.List[model.Page]](nil)
	if err != nil {
		panic(err)
	}
	page := list.Properties["items"].Items
	db, err := jsonschema.For[model.Database](nil)
	if err != nil {
		panic(err)
	}
	list.Properties["items"].Items = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{page, db}}
	raw, err := json.Marshal(list)
	if err != nil {
		panic(err)
	}
	return raw
}

func (c *Connector) search(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	switch in.Object {
	case "":
		in.Object = "page"
	case "page", "database":
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: object: page or database, got %q", in.Object)
	}
	p, err := c.kit.Open(call, in.Page, DefaultPage, MaxPage)
	if err != nil {
		return nil, err
	}
	var out saas.List[any]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		return c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
			res, err := api.Search.Do(ctx, &notionapi.SearchRequest{
				Query: in.Query, Filter: notionapi.SearchFilter{Property: "object", Value: in.Object},
				Sort:        &notionapi.SortObject{Timestamp: notionapi.TimestampLastEdited, Direction: notionapi.SortOrderDESC},
				StartCursor: notionapi.Cursor(p.Token), PageSize: p.Size,
			})
			if err != nil {
				return err
			}
			items := make([]any, 0, len(res.Results))
			for _, o := range res.Results {
				var item any
				switch v := o.(type) {
				case *notionapi.Page:
					item, err = c.pageOf(call, v)
				case *notionapi.Database:
					item, err = c.databaseOf(call, v)
				default:
					err = saas.Mapping("notion", "a search result of type %T", o)
				}
				if err != nil {
					return err
				}
				items = append(items, item)
			}
			out = saas.ListOf(c.kit, call, items, next(res.HasMore, res.NextCursor))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s(s)", len(out.Items), in.Object)
	if in.Query != "" {
		fmt.Fprintf(&b, " matching %q", in.Query)
	}
	for _, it := range out.Items {
		switch v := it.(type) {
		case model.Page:
			b.WriteString("\n" + pageText(v))
		case model.Database:
			fmt.Fprintf(&b, "\n%s %s", orUntitled(v.Title), v.URL)
		}
	}
	moreText(&b, out.NextCursor)
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// next is the page token after a page: "" on the last.
func next(more bool, cursor notionapi.Cursor) string {
	if !more {
		return ""
	}
	return string(cursor)
}

func (c *Connector) queryDatabase(ctx context.Context, call *connectors.Call, in *queryDatabaseIn) (*legate.Result, error) {
	id, err := c.kit.Resolve(call, kindDatabase, in.Database)
	if err != nil {
		return nil, err
	}
	var filters notionapi.AndCompoundFilter
	if in.TitleContains != "" {
		filters = append(filters, notionapi.PropertyFilter{Property: "title", RichText: &notionapi.TextFilterCondition{Contains: in.TitleContains}})
	}
	if in.EditedSince != "" {
		since, err := time.Parse(time.RFC3339, in.EditedSince)
		if err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: edited_since: must be an RFC 3339 time, got %q", in.EditedSince)
		}
		d := notionapi.Date(since)
		filters = append(filters, notionapi.TimestampFilter{Timestamp: notionapi.TimestampLastEdited, LastEditedTime: &notionapi.DateFilterCondition{OnOrAfter: &d}})
	}
	p, err := c.kit.Open(call, in.Page, DefaultPage, MaxPage)
	if err != nil {
		return nil, err
	}
	req := &notionapi.DatabaseQueryRequest{
		Sorts:       []notionapi.SortObject{{Timestamp: notionapi.TimestampLastEdited, Direction: notionapi.SortOrderDESC}},
		StartCursor: notionapi.Cursor(p.Token), PageSize: p.Size,
	}
	switch len(filters) {
	case 0:
	case 1:
		req.Filter = filters[0]
	default:
		req.Filter = filters
	}
	var out saas.List[model.Page]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		return c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
			res, err := api.Database.Query(ctx, notionapi.DatabaseID(id), req)
			if err != nil {
				return err
			}
			items := make([]model.Page, 0, len(res.Results))
			for i := range res.Results {
				m, err := c.pageOf(call, &res.Results[i])
				if err != nil {
					return err
				}
				items = append(items, m)
			}
			out = saas.ListOf(c.kit, call, items, next(res.HasMore, res.NextCursor))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d page(s)", len(out.Items))
	for _, pg := range out.Items {
		b.WriteString("\n" + pageText(pg))
	}
	moreText(&b, out.NextCursor)
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// resolveParent resolves a ref of one of kinds.
func (c *Connector) resolveParent(call *connectors.Call, ref string, kinds ...string) (kind, id string, err error) {
	for _, k := range kinds {
		if strings.HasPrefix(ref, k+"://") {
			id, err := c.kit.Resolve(call, k, ref)
			return k, id, err
		}
	}
	return "", "", legate.Errorf(legate.CodeNotFound, "notion: parent: no %s %q here; pass a ref this connector returned", strings.Join(kinds, " or "), ref)
}

// checkText refuses an empty text or one over max characters.
func checkText(field, s string, max int) error {
	switch n := utf8.RuneCountInString(s); {
	case strings.TrimSpace(s) == "":
		return legate.Errorf(legate.CodeInvalidArgument, "notion: %s: must not be empty", field)
	case n > max:
		return legate.Errorf(legate.CodeInvalidArgument, "notion: %s: at most %d characters, got %d", field, max, n)
	}
	return nil
}

// paragraphs splits text at blank lines into paragraph blocks.
func paragraphs(text string) []notionapi.Block {
	var out []notionapi.Block
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if para = strings.Trim(para, "\n"); strings.TrimSpace(para) != "" {
			out = append(out, newBlock(notionapi.BlockTypeParagraph, para, false))
		}
	}
	return out
}

func (c *Connector) createPage(ctx context.Context, call *connectors.Call, in *createPageIn) (*legate.Result, error) {
	kind, parent, err := c.resolveParent(call, in.Parent, kindPage, kindDatabase)
	if err != nil {
		return nil, err
	}
	if err := checkText("title", in.Title, MaxTitleRunes); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(in.Content); n > MaxTextRunes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: content: at most %d characters, got %d", MaxTextRunes, n)
	}
	content := paragraphs(in.Content)
	if len(content) > MaxContentBlocks {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: content: at most %d paragraphs, got %d; append more with append_block", MaxContentBlocks, len(content))
	}
	if len(in.Properties) > 0 && kind != kindDatabase {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: properties: only a page in a database has properties besides its title")
	}
	np := notionapi.Parent{Type: notionapi.ParentTypePageID, PageID: notionapi.PageID(parent)}
	if kind == kindDatabase {
		np = notionapi.Parent{Type: notionapi.ParentTypeDatabaseID, DatabaseID: notionapi.DatabaseID(parent)}
	}
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Page]{
		Send: func(ctx context.Context, token, marker string) (*model.Page, error) {
			var m model.Page
			err := c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
				props, err := c.rowProperties(ctx, api, call, parent, in.Properties)
				if err != nil {
					return err
				}
				// "title" is the id of every page's and database's title
				// property, whatever its name.
				props["title"] = notionapi.TitleProperty{Title: richText(in.Title)}
				pg, err := api.Page.Create(ctx, &notionapi.PageCreateRequest{
					Parent:     np,
					Properties: props,
					Children:   append(slices.Clip(content), markerBlock(marker)),
				})
				if err != nil {
					return err
				}
				m, err = c.pageOf(call, pg)
				return err
			})
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Page, error) {
			var m *model.Page
			err := c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
				pg, err := findCreatedPage(ctx, api, kind, parent, in.Title, marker, since)
				if err != nil || pg == nil {
					return err
				}
				found, err := c.pageOf(call, pg)
				m = &found
				return err
			})
			return m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created " + pageText(*out)}, nil
}

// rowProperties are the Notion values of a new row's plain properties
// (none when values is empty), by the types database id gives them.
func (c *Connector) rowProperties(ctx context.Context, api *notionapi.Client, call *connectors.Call, id string, values map[string]any) (notionapi.Properties, error) {
	if len(values) == 0 {
		return notionapi.Properties{}, nil
	}
	db, err := api.Database.Get(ctx, notionapi.DatabaseID(id))
	if err != nil {
		return nil, err
	}
	types := make(map[string]string, len(db.Properties))
	for name, cfg := range db.Properties {
		if cfg != nil {
			types[name] = string(cfg.GetType())
		}
	}
	return c.properties(call, types, values)
}

// blockTypes are the types append_block makes.
var blockTypes = []notionapi.BlockType{
	notionapi.BlockTypeParagraph, notionapi.BlockTypeHeading1, notionapi.BlockTypeHeading2, notionapi.BlockTypeHeading3,
	notionapi.BlockTypeBulletedListItem, notionapi.BlockTypeNumberedListItem, notionapi.BlockTypeToDo,
	notionapi.BlockTypeQuote, notionapi.BlockTypeCode,
}

// newBlock is a block of type t (one of blockTypes) holding text.
func newBlock(t notionapi.BlockType, text string, checked bool) notionapi.Block {
	basic := notionapi.BasicBlock{Object: notionapi.ObjectTypeBlock, Type: t}
	rt := richText(text)
	switch t {
	case notionapi.BlockTypeHeading1:
		return &notionapi.Heading1Block{BasicBlock: basic, Heading1: notionapi.Heading{RichText: rt}}
	case notionapi.BlockTypeHeading2:
		return &notionapi.Heading2Block{BasicBlock: basic, Heading2: notionapi.Heading{RichText: rt}}
	case notionapi.BlockTypeHeading3:
		return &notionapi.Heading3Block{BasicBlock: basic, Heading3: notionapi.Heading{RichText: rt}}
	case notionapi.BlockTypeBulletedListItem:
		return &notionapi.BulletedListItemBlock{BasicBlock: basic, BulletedListItem: notionapi.ListItem{RichText: rt}}
	case notionapi.BlockTypeNumberedListItem:
		return &notionapi.NumberedListItemBlock{BasicBlock: basic, NumberedListItem: notionapi.ListItem{RichText: rt}}
	case notionapi.BlockTypeToDo:
		return &notionapi.ToDoBlock{BasicBlock: basic, ToDo: notionapi.ToDo{RichText: rt, Checked: checked}}
	case notionapi.BlockTypeQuote:
		return &notionapi.QuoteBlock{BasicBlock: basic, Quote: notionapi.Quote{RichText: rt}}
	case notionapi.BlockTypeCode:
		return &notionapi.CodeBlock{BasicBlock: basic, Code: notionapi.Code{RichText: rt, Language: "plain text"}}
	}
	return &notionapi.ParagraphBlock{BasicBlock: basic, Paragraph: notionapi.Paragraph{RichText: rt}}
}

func (c *Connector) appendBlock(ctx context.Context, call *connectors.Call, in *appendBlockIn) (*legate.Result, error) {
	kind, parent, err := c.resolveParent(call, in.Parent, kindPage, kindBlock)
	if err != nil {
		return nil, err
	}
	typ := notionapi.BlockType(in.Type)
	switch {
	case in.Type == "":
		typ = notionapi.BlockTypeParagraph
	case !containsType(typ):
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: type: one of paragraph, heading_1, heading_2, heading_3, bulleted_list_item, numbered_list_item, to_do, quote, code; got %q", in.Type)
	}
	if in.Checked && typ != notionapi.BlockTypeToDo {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: checked: only a to_do is checked")
	}
	if err := checkText("text", in.Text, MaxTextRunes); err != nil {
		return nil, err
	}
	parentRef := c.kit.Ref(call, kind, parent)
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Block]{
		Send: func(ctx context.Context, token, marker string) (*model.Block, error) {
			var m model.Block
			err := c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
				res, err := api.Block.AppendChildren(ctx, notionapi.BlockID(parent), &notionapi.AppendBlockChildrenRequest{
					Children: []notionapi.Block{newBlock(typ, in.Text, in.Checked), markerBlock(marker)},
				})
				if err != nil {
					return err
				}
				b := appended(res.Results, marker)
				if b == nil {
					// An answer listing the parent's first children rather
					// than the new ones: look the block up.
					if b, err = findAppended(ctx, api, parent, marker); err != nil {
						return err
					}
					if b == nil {
						return saas.Mapping("notion", "the appended block is neither in the answer nor under its parent")
					}
				}
				m, err = c.blockOf(call, parentRef, b)
				return err
			})
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, _ time.Time) (*model.Block, error) {
			var m *model.Block
			err := c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
				b, err := findAppended(ctx, api, parent, marker)
				if err != nil || b == nil {
					return err
				}
				found, err := c.blockOf(call, parentRef, b)
				m = &found
				return err
			})
			return m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("appended a %s: %s", out.Type, out.Text)}, nil
}

// appended is the block just before marker's in an append's answer.
func appended(results []notionapi.Block, marker string) notionapi.Block {
	for i, b := range results {
		if i > 0 && isMarker(b) && b.GetRichTextString() == markerText(marker) {
			return results[i-1]
		}
	}
	return nil
}

func containsType(t notionapi.BlockType) bool {
	for _, bt := range blockTypes {
		if bt == t {
			return true
		}
	}
	return false
}

func orUntitled(s string) string {
	if s == "" {
		return "(untitled)"
	}
	return s
}

// pageText is a page in one line.
func pageText(p model.Page) string {
	s := orUntitled(p.Title)
	if p.URL != "" {
		s += " " + p.URL
	}
	return s
}

func moreText(b *strings.Builder, cursor string) {
	if cursor != "" {
		b.WriteString("\nmore: pass next_cursor as cursor")
	}
}
