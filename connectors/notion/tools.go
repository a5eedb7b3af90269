package notion

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion/internal/md"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// The toolsets of the type.
const (
	setPages     = "pages"
	setDatabases = "databases"
	setComments  = "comments"
	setUsers     = "users"
	setLifecycle = "lifecycle"
)

// Toolsets are the notion type's groups of tools. lifecycle (trash,
// restore, move) is not a default: moving a page to the trash is
// destructive, and most teams' agents only read and add.
var Toolsets = []connectors.Toolset{
	{Name: setPages, Description: "find, read, create and add to pages, set their properties", Default: true},
	{Name: setDatabases, Description: "a database's fields and querying its rows", Default: true},
	{Name: setComments, Description: "read and add comments", Default: true},
	{Name: setUsers, Description: "the workspace's users"},
	{Name: setLifecycle, Description: "move pages to the trash, restore and move them"},
}

type searchIn struct {
	saas.Page
	Query  string `json:"query,omitempty" jsonschema:"words to look for in titles; empty lists everything shared with the integration"`
	Object string `json:"object,omitempty" jsonschema:"what to find: page (the default) or database (its data sources)"`
}

// inSet is t in toolset set.
func inSet(set string, t connectors.Tool) connectors.Tool {
	t.Toolset = set
	return t
}

// once ends a write tool's description.
func once(desc string) string { return desc + " " + saas.OnceNote }

func (c *Connector) newTools() []connectors.Tool {
	search := connectors.NewTool("search",
		fmt.Sprintf("Find the pages (page.v1) or databases (database.v1, one per data source) shared with the integration by title, most recently edited first, a page of results at a time: limit (default %d, at most %d) and cursor (the next_cursor of the previous page).", DefaultPage, MaxPage),
		legate.ClassRead, c.search)
	search.OutputSchema = searchSchema()
	return []connectors.Tool{
		inSet(setPages, search),
		inSet(setPages, connectors.Returning[PageContent](connectors.NewTool("read_page",
			fmt.Sprintf("Read a page: its properties as plain values and its content as Markdown, nested blocks (list items, toggles, columns) included, %d top-level blocks at a time by default (limit, at most %d); when cut, next_cursor reads on.", DefaultReadBlocks, MaxReadBlocks),
			legate.ClassRead, c.readPage))),
		inSet(setPages, connectors.Returning[model.Page](connectors.NewTool("create_page",
			once("Create a page under a page or in a database (data source), with a title, Markdown content and, in a database, other properties as plain values; returns it (page.v1)."),
			legate.ClassWrite, c.createPage))),
		inSet(setPages, connectors.Returning[model.Block](connectors.NewTool("append_block",
			once("Append one block (a paragraph, heading, list item, to-do, quote or code) at the end of a page or block; returns it (block.v1)."),
			legate.ClassWrite, c.appendBlock))),
		inSet(setPages, connectors.Returning[Appended](connectors.NewTool("append_markdown",
			once("Append Markdown (headings, lists, to-dos, quotes, code, links, bold/italic) at the end of a page or block, as up to 100 blocks; returns them (block.v1)."),
			legate.ClassWrite, c.appendMarkdown))),
		inSet(setPages, connectors.Returning[model.Page](connectors.NewTool("update_page",
			once("Set a page's properties by name, as plain values by their type (Status = Done, a due date, people, relations, a checkbox, a number, text), or its title; returns the page (page.v1). Setting the same values again changes nothing."),
			legate.ClassWrite, c.updatePage))),
		inSet(setDatabases, connectors.Returning[Schema](connectors.NewTool("get_data_source",
			"Describe a database (data source): its properties with their types, the options of select, status and multi_select, and where relations point.",
			legate.ClassRead, c.getDataSource))),
		inSet(setDatabases, connectors.Returning[saas.List[model.Page]](connectors.NewTool("query_database",
			fmt.Sprintf("List the pages (rows) of a database (data source) with their properties as plain values: a filter and sorts in Notion's own language passed through (Status is not Done, sorted by Due), or the simple title_contains and edited_since; most recently edited first by default; limit (default %d, at most %d) and cursor.", DefaultPage, MaxPage),
			legate.ClassRead, c.queryDatabase))),
		inSet(setComments, connectors.Returning[saas.List[model.Comment]](connectors.NewTool("list_comments",
			fmt.Sprintf("List the open comments on a page or block (message.v1, oldest first, with the discussion each is in as thread_ref); limit (default %d, at most %d) and cursor.", DefaultPage, MaxPage),
			legate.ClassRead, c.social.listComments))),
		inSet(setComments, connectors.Returning[model.Comment](connectors.NewTool("add_comment",
			once("Comment on a page, or reply in a discussion (a thread_ref from list_comments); returns the comment (message.v1)."),
			legate.ClassWrite, c.social.addComment))),
		inSet(setUsers, connectors.Returning[saas.List[model.User]](connectors.NewTool("list_users",
			fmt.Sprintf("List the workspace's people and bots (user.v1); limit (default %d, at most %d) and cursor. Their refs are what people properties take.", DefaultPage, MaxPage),
			legate.ClassRead, c.social.listUsers))),
		inSet(setUsers, connectors.Returning[model.User](connectors.NewTool("get_user",
			"Get one user (user.v1) by ref or Notion id.",
			legate.ClassRead, c.social.getUser))),
		inSet(setLifecycle, connectors.Returning[model.Page](connectors.NewTool("archive_page",
			once("Move a page to Notion's trash (in_trash), where restore_page brings it back until the trash is emptied; returns it (page.v1)."),
			legate.ClassDestructive, c.trash(true)))),
		inSet(setLifecycle, connectors.Returning[model.Page](connectors.NewTool("restore_page",
			once("Bring a page back from Notion's trash; returns it (page.v1)."),
			legate.ClassWrite, c.trash(false)))),
		inSet(setLifecycle, connectors.Returning[model.Page](connectors.NewTool("move_page",
			once("Move a page under another page or into a database (data source); returns it (page.v1)."),
			legate.ClassWrite, c.movePage))),
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
	filter := "page"
	switch in.Object {
	case "", "page":
		in.Object = "page"
	case "database", "data_source":
		in.Object, filter = "database", "data_source"
	default:
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: object: page or database, got %q", in.Object)
	}
	p, err := c.kit.Open(call, in.Page, DefaultPage, MaxPage)
	if err != nil {
		return nil, err
	}
	body := map[string]any{
		"filter":    map[string]any{"property": "object", "value": filter},
		"sort":      map[string]any{"timestamp": "last_edited_time", "direction": "descending"},
		"page_size": p.Size,
	}
	if in.Query != "" {
		body["query"] = in.Query
	}
	if p.Token != "" {
		body["start_cursor"] = p.Token
	}
	var out saas.List[any]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		var items []any
		var next string
		var err error
		if filter == "page" {
			items, next, err = searchFor(ctx, c, token, body, filter, func(p rest.Page) (any, error) { return c.pageOf(call, &p) })
		} else {
			items, next, err = searchFor(ctx, c, token, body, filter, func(d rest.DataSource) (any, error) { return c.databaseOf(call, &d) })
		}
		if err != nil {
			return err
		}
		out = saas.ListOf(c.kit, call, items, next)
		return nil
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
			fmt.Fprintf(&b, "\n%s %s", md.OrUntitled(v.Title), v.URL)
		}
	}
	moreText(&b, out.NextCursor)
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// searchFor sends a search whose filter names T's object (want), and converts
// its results, decoded as T in the one pass over the answer; a result of
// another object is a mapping error.
func searchFor[T interface{ Kind() string }](ctx context.Context, c *Connector, token string, body map[string]any, want string, of func(T) (any, error)) ([]any, string, error) {
	var l rest.List[T]
	if err := c.api.Send(ctx, token, rest.Request{Method: http.MethodPost, Path: "search", Body: body}, &l); err != nil {
		return nil, "", err
	}
	items, err := saas.Convert(l.Results, func(r T) (any, error) {
		if r.Kind() != want {
			return nil, saas.Mapping("notion", "a search for %ss answered a result of object %q", want, r.Kind())
		}
		return of(r)
	})
	return items, l.Next(), err
}

// pageText is a page in one line.
func pageText(p model.Page) string {
	s := md.OrUntitled(p.Title)
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
