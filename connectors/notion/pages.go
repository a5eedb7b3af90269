package notion

import (
	"context"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/readback"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

type createPageIn struct {
	Parent     string `json:"parent" jsonschema:"the parent page, or the database (data source) to add a row to: a ref from search or query_database, a Notion id, or a URL"`
	DataSource string `json:"data_source,omitempty" jsonschema:"when parent is a database of several data sources: which one, by ref, id or name"`
	Title      string `json:"title" jsonschema:"the page's title"`
	Content    string `json:"content,omitempty" jsonschema:"the page's content as Markdown: # headings, - bullets, 1. numbered items, - [ ] to-dos, > quotes, code fences with a language, --- dividers, **bold**, _italic_, ~~strike~~, code and [links](https://…)"`
	// Properties are a database row's other properties.
	Properties map[string]any `json:"properties,omitempty" jsonschema:"for a page in a database: its other properties by name, as plain values: text, number, select or status option name, list of multi_select names, date (YYYY-MM-DD or RFC 3339, or start/end), checkbox true or false, url, email, phone number, list of user refs or ids for people, list of page refs or ids for a relation"`
}

// maxBlocks is how many blocks one request writes: Notion's 100, less
// the marker's when markers are on.
func (c *Connector) maxBlocks() int {
	if c.find.Markers {
		return 99
	}
	return 100
}

// contentBlocks is Markdown as at most maxBlocks blocks.
func (c *Connector) contentBlocks(field, text string, required bool) ([]md.NewBlock, error) {
	if required {
		if err := checkText(field, text, MaxTextRunes); err != nil {
			return nil, err
		}
	} else if n := utf8.RuneCountInString(text); n > MaxTextRunes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: %s: at most %d characters, got %d; append the rest with append_markdown", field, MaxTextRunes, n)
	}
	blocks := md.Blocks(text)
	if len(blocks) > c.maxBlocks() {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: %s: at most %d blocks (paragraphs, items, headings) in one call, got %d; append the rest with append_markdown", field, c.maxBlocks(), len(blocks))
	}
	if required && len(blocks) == 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: %s: no content in it", field)
	}
	return blocks, nil
}

// pageParent resolves a page's parent: a page, or a data source (named
// by itself or its database). A native id is tried as a page first.
func (c *Connector) pageParent(ctx context.Context, token string, call *connectors.Call, ref, dataSource string) (kind, id string, err error) {
	kind, id, err = c.resolve(call, "parent", ref, kindPage, kindDataSource, kindDatabase)
	if err != nil || kind == kindPage {
		return kind, id, err
	}
	if kind == "" {
		var pg rest.Page
		err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "pages/" + id}, &pg)
		switch {
		case err == nil:
			return kindPage, id, nil
		case legate.CodeOf(err) != legate.CodeNotFound && legate.CodeOf(err) != legate.CodeInvalidArgument:
			return "", "", err
		}
	}
	ds, err := c.dataSourceID(ctx, token, call, dataSourceIn{Database: ref, DataSource: dataSource})
	if kind == "" && legate.CodeOf(err) == legate.CodeNotFound {
		return "", "", legate.Errorf(legate.CodeNotFound, "notion: parent: no page or database %s is shared with the integration; share it in Notion (… menu, Connections)", id)
	}
	return kindDataSource, ds, err
}

// parentJSON is a page's parent as Notion takes it.
func parentJSON(kind, id string) map[string]any {
	if kind == kindDataSource {
		return map[string]any{"type": "data_source_id", "data_source_id": id}
	}
	return map[string]any{"type": "page_id", "page_id": id}
}

func (c *Connector) createPage(ctx context.Context, call *connectors.Call, in *createPageIn) (*legate.Result, error) {
	if err := checkText("title", in.Title, MaxTitleRunes); err != nil {
		return nil, err
	}
	content, err := c.contentBlocks("content", in.Content, false)
	if err != nil {
		return nil, err
	}
	if _, _, err := c.resolve(call, "parent", in.Parent, kindPage, kindDataSource, kindDatabase); err != nil {
		return nil, err
	}
	np := readback.NewPage{Title: in.Title, Content: content}
	var props notionapi.Properties
	var kind string
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		if kind, np.Parent, err = c.pageParent(ctx, token, call, in.Parent, in.DataSource); err != nil {
			return err
		}
		np.InDataSource = kind == kindDataSource
		if len(in.Properties) > 0 && !np.InDataSource {
			return legate.Errorf(legate.CodeInvalidArgument, "notion: properties: only a page in a database has properties besides its title")
		}
		props = notionapi.Properties{}
		if len(in.Properties) > 0 {
			types, err := c.propertyTypes(ctx, token, np.Parent)
			if err != nil {
				return err
			}
			props, err = c.properties(call, types, in.Properties, "title")
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// "title" is the id of every page's and data source's title
	// property, whatever its name.
	props["title"] = &notionapi.TitleProperty{Title: richText(in.Title)}
	out, err := saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Page]{
		Send: func(ctx context.Context, token, marker string) (*model.Page, error) {
			var pg rest.Page
			body := map[string]any{"parent": parentJSON(kind, np.Parent), "properties": props, "children": c.find.WithMarker(content, marker)}
			if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodPost, Path: "pages", Body: body}, &pg); err != nil {
				return nil, err
			}
			m, err := c.pageOf(call, &pg)
			return &m, err
		},
		Find: func(ctx context.Context, token, marker string, since time.Time) (*model.Page, error) {
			pg, err := c.find.Created(ctx, token, np, marker, since)
			if err != nil || pg == nil {
				return nil, err
			}
			m, err := c.pageOf(call, pg)
			return &m, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "created " + pageText(*out)}, nil
}

type updatePageIn struct {
	Page       string         `json:"page" jsonschema:"the page: a ref from search or query_database, a Notion page id, or its URL"`
	Title      string         `json:"title,omitempty" jsonschema:"a new title"`
	Properties map[string]any `json:"properties,omitempty" jsonschema:"properties to set, by name, as plain values by their type (get_data_source lists them): status or select option name (\"Done\"), date (YYYY-MM-DD, RFC 3339, or start/end), list of user refs or ids for people, list of page refs or ids for a relation, checkbox true or false, number, text, multi_select names, url, email, phone number"`
}

func (c *Connector) updatePage(ctx context.Context, call *connectors.Call, in *updatePageIn) (*legate.Result, error) {
	_, id, err := c.resolve(call, "page", in.Page, kindPage)
	if err != nil {
		return nil, err
	}
	if len(in.Properties) == 0 && in.Title == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: properties: give the properties to set, or a title")
	}
	if in.Title != "" {
		if err := checkText("title", in.Title, MaxTitleRunes); err != nil {
			return nil, err
		}
	}
	var props notionapi.Properties
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		props = notionapi.Properties{}
		if len(in.Properties) == 0 {
			return nil
		}
		var pg rest.Page
		if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "pages/" + id}, &pg); err != nil {
			return err
		}
		types := map[string]string{}
		if pg.Parent.DataSourceID != "" {
			if types, err = c.propertyTypes(ctx, token, pg.Parent.DataSourceID); err != nil {
				return err
			}
		} else {
			for name, p := range pg.Properties {
				types[name] = p.Type
			}
		}
		titleArg := ""
		if in.Title != "" {
			titleArg = "title"
		}
		props, err = c.properties(call, types, in.Properties, titleArg)
		return err
	})
	if err != nil {
		return nil, err
	}
	if in.Title != "" {
		props["title"] = &notionapi.TitleProperty{Title: richText(in.Title)}
	}
	out, err := c.pageWrite(ctx, call, id, rest.Request{Method: http.MethodPatch, Path: "pages/" + id, Body: map[string]any{"properties": props}},
		func(pg *rest.Page) bool { return rest.Holds(pg.Properties, props) })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "updated " + pageText(*out)}, nil
}

// pageWrite sends r, a write whose answer is page id and whose effect
// is the same when sent twice, once per idempotency key. Its Find reads
// the page back: when done says it is as the write leaves it, an earlier
// attempt wrote, and nothing is sent again.
func (c *Connector) pageWrite(ctx context.Context, call *connectors.Call, id string, r rest.Request, done func(pg *rest.Page) bool) (*model.Page, error) {
	read := func(ctx context.Context, token string, r rest.Request) (*model.Page, *rest.Page, error) {
		var pg rest.Page
		if err := c.api.Send(ctx, token, r, &pg); err != nil {
			return nil, nil, err
		}
		m, err := c.pageOf(call, &pg)
		return &m, &pg, err
	}
	return saas.WriteOnce(ctx, c.kit, call, saas.Write[model.Page]{
		Send: func(ctx context.Context, token, _ string) (*model.Page, error) {
			m, _, err := read(ctx, token, r)
			return m, err
		},
		Find: func(ctx context.Context, token, _ string, _ time.Time) (*model.Page, error) {
			m, pg, err := read(ctx, token, rest.Request{Method: http.MethodGet, Path: "pages/" + id})
			if err != nil || !done(pg) {
				return nil, err
			}
			return m, nil
		},
	})
}

type pageIn struct {
	Page string `json:"page" jsonschema:"the page: a ref from search or query_database, a Notion page id, or its URL"`
}

// trash moves a page to the trash (archive_page) or out of it
// (restore_page).
func (c *Connector) trash(inTrash bool) func(ctx context.Context, call *connectors.Call, in *pageIn) (*legate.Result, error) {
	return func(ctx context.Context, call *connectors.Call, in *pageIn) (*legate.Result, error) {
		_, id, err := c.resolve(call, "page", in.Page, kindPage)
		if err != nil {
			return nil, err
		}
		out, err := c.pageWrite(ctx, call, id, rest.Request{Method: http.MethodPatch, Path: "pages/" + id, Body: map[string]any{"in_trash": inTrash}},
			func(pg *rest.Page) bool { return pg.InTrash == inTrash })
		if err != nil {
			return nil, err
		}
		verb := "restored "
		if inTrash {
			verb = "moved to the trash (restore_page brings it back): "
		}
		return &legate.Result{Structured: out, Text: verb + pageText(*out)}, nil
	}
}

type movePageIn struct {
	Page       string `json:"page" jsonschema:"the page to move: a ref, a Notion page id, or its URL"`
	Parent     string `json:"parent" jsonschema:"the new parent: a page, or a database (data source), by ref, id or URL"`
	DataSource string `json:"data_source,omitempty" jsonschema:"when parent is a database of several data sources: which one"`
}

func (c *Connector) movePage(ctx context.Context, call *connectors.Call, in *movePageIn) (*legate.Result, error) {
	_, id, err := c.resolve(call, "page", in.Page, kindPage)
	if err != nil {
		return nil, err
	}
	if _, _, err := c.resolve(call, "parent", in.Parent, kindPage, kindDataSource, kindDatabase); err != nil {
		return nil, err
	}
	var kind, parent string
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		kind, parent, err = c.pageParent(ctx, token, call, in.Parent, in.DataSource)
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := c.pageWrite(ctx, call, id, rest.Request{Method: http.MethodPost, Path: "pages/" + id + "/move", Body: map[string]any{"parent": parentJSON(kind, parent)}},
		func(pg *rest.Page) bool { return pg.Parent.PageID == parent || pg.Parent.DataSourceID == parent })
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: fmt.Sprintf("moved %s", pageText(*out))}, nil
}
