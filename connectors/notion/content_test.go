package notion_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/notion"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// read_page walks a page's top-level blocks by cursor, and each
// block's children over several pages of Notion's listing.
func TestReadPageWalksBlocksByCursor(t *testing.T) {
	e := newEnv(t)
	s := e.s
	s.mu.Lock()
	list := &block{id: s.newID(), typ: "bulleted_list_item", text: "many", color: "default"}
	s.children[e.handbook.id] = append(s.children[e.handbook.id], list)
	for i := range 250 {
		s.children[list.id] = append(s.children[list.id], &block{id: s.newID(), typ: "numbered_list_item", text: fmt.Sprint("step ", i), color: "default"})
	}
	s.mu.Unlock()
	var parts []string
	cursor, calls := "", 0
	for {
		calls++
		c := decode[notion.PageContent](t, e.call(t, "read_page", fmt.Sprintf(`{"page":%q,"limit":2,"cursor":%q}`, e.handbook.id, cursor)))
		parts = append(parts, c.Markdown)
		if cursor = c.NextCursor; cursor == "" {
			break
		}
		if calls > 10 {
			t.Fatal("no end")
		}
	}
	md := strings.Join(parts, "")
	if calls != 3 || !strings.HasPrefix(md, "# Welcome\n- item\n  - nested\n") || !strings.Contains(md, "  1. step 0\n") || !strings.HasSuffix(md, "  250. step 249\n") {
		t.Fatalf("%d calls:\n%s", calls, md)
	}
}

// A page longer than one call reads is cut at a top-level block, says
// so, and reads on from there.
func TestReadPageIsCutAndGoesOn(t *testing.T) {
	e := newEnv(t)
	s := e.s
	s.mu.Lock()
	var big []*block
	for i := range 1500 {
		big = append(big, &block{id: s.newID(), typ: "paragraph", text: fmt.Sprint("line ", i), color: "default"})
	}
	s.children[e.handbook.id] = big
	s.mu.Unlock()
	res, err := e.in.call(t, "t1", "read_page", fmt.Sprintf(`{"page":%q,"limit":100}`, e.handbook.id), "")
	if err != nil {
		t.Fatal(err)
	}
	c := decode[notion.PageContent](t, outcome{res, nil})
	if c.Blocks != 100 || c.Truncated || c.NextCursor == "" || !strings.Contains(res.Text, "pass next_cursor as cursor") {
		t.Fatalf("%d blocks, truncated %v, cursor %q", c.Blocks, c.Truncated, c.NextCursor)
	}
	// One toggle holding 1500 lines: cut at the bound, and said so.
	s.mu.Lock()
	toggle := &block{id: s.newID(), typ: "toggle", text: "all", color: "default"}
	s.children[toggle.id] = big
	s.children[e.handbook.id] = []*block{toggle, {id: s.newID(), typ: "paragraph", text: "after", color: "default"}}
	s.mu.Unlock()
	c = decode[notion.PageContent](t, e.call(t, "read_page", fmt.Sprintf(`{"page":%q}`, e.handbook.id)))
	if !c.Truncated || c.NextCursor == "" || !strings.Contains(c.Markdown, "cut: this block's content goes on") {
		t.Fatalf("truncated %v, cursor %q, %d blocks", c.Truncated, c.NextCursor, c.Blocks)
	}
	rest := decode[notion.PageContent](t, e.call(t, "read_page", fmt.Sprintf(`{"page":%q,"cursor":%q}`, e.handbook.id, c.NextCursor)))
	if rest.Markdown != "after\n" || rest.NextCursor != "" {
		t.Fatalf("read on: %q", rest.Markdown)
	}
}

// read_page names who created the page as the author of what it returns
// (by id: Notion gives a page's creator without a name); search, with
// many authors, names none.
func TestReadPageNamesItsCreator(t *testing.T) {
	e := newEnv(t)
	o := e.call(t, "read_page", fmt.Sprintf(`{"page":%q}`, e.handbook.id))
	if o.err != nil {
		t.Fatal(o.err)
	}
	if a, ok := provenance.AuthorIn(o.res.Meta); !ok || a != botID {
		t.Fatalf("author %q (%v), want %q", a, ok, botID)
	}
	o = e.call(t, "search", `{}`)
	if o.err != nil || o.res.Meta != nil {
		t.Fatalf("search: meta %v, error %v", o.res, o.err)
	}
}

// A page is named by its ref, its id with or without dashes, or its
// URL (?p= too); a database by its URL with a view.
func TestNativeIDsAndURLs(t *testing.T) {
	e := newEnv(t)
	plain := strings.ReplaceAll(e.handbook.id, "-", "")
	for _, form := range []string{e.handbook.id, plain, strings.ToUpper(plain), notionURL("Handbook", e.handbook.id),
		"https://www.notion.so/acme/" + strings.ReplaceAll(e.tasks.dbID, "-", "") + "?v=0123456789abcdef0123456789abcdef&p=" + plain} {
		c := decode[notion.PageContent](t, e.call(t, "read_page", fmt.Sprintf(`{"page":%q}`, form)))
		if c.Page.Title != "Handbook" {
			t.Fatalf("%s: read %q", form, c.Page.Title)
		}
	}
	for _, bad := range []string{"Handbook", "https://example.com/Handbook-" + plain, "page://forged"} {
		_, err := e.in.call(t, "t1", "read_page", fmt.Sprintf(`{"page":%q}`, bad), "")
		wantCode(t, err, legate.CodeNotFound)
	}
}

// A database of several data sources names them when a tool is given the
// database alone, and takes data_source by name.
func TestSeveralDataSourcesAreNamed(t *testing.T) {
	e := newEnv(t)
	e.s.addSource(e.tasks, "Bugs", map[string]string{"Name": "title"})
	_, err := e.in.call(t, "t1", "query_database", fmt.Sprintf(`{"database":%q}`, notionURL("Sprint", e.tasks.dbID)), "")
	le := wantCode(t, err, legate.CodeInvalidArgument)
	if !strings.Contains(le.Message, `"Sprint" (data_source://`) || !strings.Contains(le.Message, `"Bugs" (data_source://`) || !strings.Contains(le.Message, "pass data_source") {
		t.Fatalf("message %q", le.Message)
	}
	l := decode[saas.List[model.Page]](t, e.call(t, "query_database", fmt.Sprintf(`{"database":%q,"data_source":"Sprint"}`, e.tasks.dbID)))
	if len(l.Items) != 9 {
		t.Fatalf("%d rows", len(l.Items))
	}
	pg := decode[model.Page](t, e.call(t, "create_page", fmt.Sprintf(`{"parent":%q,"data_source":"bugs","title":"crash"}`, e.tasks.dbID)))
	if pg.ProviderMetadata["parent_type"] != "data_source_id" {
		t.Fatalf("created %+v", pg)
	}
	_, err = e.in.call(t, "t1", "query_database", fmt.Sprintf(`{"database":%q,"data_source":"Ideas"}`, e.tasks.dbID), "")
	if le := wantCode(t, err, legate.CodeInvalidArgument); !strings.Contains(le.Message, `no data source "Ideas"`) {
		t.Fatalf("message %q", le.Message)
	}
}

// query_database refuses a filter or sorts that are not Notion's shapes
// before sending anything.
func TestQueryArgumentsAreChecked(t *testing.T) {
	e := newEnv(t)
	before := e.s.count("query")
	for _, args := range []string{`"filter":{}`, `"sorts":[{"direction":"ascending"}]`, `"filter":"Status = Done"`} {
		_, err := e.in.call(t, "t1", "query_database", fmt.Sprintf(`{"database":%q,%s}`, e.tasks.id, args), "")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	if e.s.count("query") != before {
		t.Fatal("a refused query was sent")
	}
}

// A write whose answer comes reads nothing back: the appended blocks are
// in Notion's answer.
func TestAnsweredWritesReadNothingBack(t *testing.T) {
	e := newEnv(t)
	a := decode[notion.Appended](t, e.call(t, "append_markdown", fmt.Sprintf(`{"parent":%q,"markdown":"one\n\ntwo"}`, e.handbook.id)))
	decode[model.Page](t, e.call(t, "create_page", fmt.Sprintf(`{"parent":%q,"title":"t","content":"x"}`, e.tasks.id)))
	if len(a.Blocks) != 2 || e.s.count("children") != 0 || e.s.count("me") != 0 || e.s.count("query") != 0 {
		t.Fatalf("%d blocks; %d listings, %d reads of the bot, %d queries", len(a.Blocks), e.s.count("children"), e.s.count("me"), e.s.count("query"))
	}
}

// A native id that is no page or database shared with the integration
// is NOT_FOUND saying so, and nothing is written.
func TestUnknownNativeParentIsNotFound(t *testing.T) {
	e := newEnv(t)
	_, err := e.in.call(t, "t1", "create_page", `{"parent":"0123456789abcdef0123456789abcdef","title":"x"}`, "op-unknown")
	if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "no page or database 01234567-89ab-cdef-0123-456789abcdef is shared") {
		t.Fatalf("message %q", le.Message)
	}
	if e.s.writeCount() != 0 {
		t.Fatal("written")
	}
}
