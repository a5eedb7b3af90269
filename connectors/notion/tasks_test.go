package notion_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/notion"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// env is a workspace as people have them: a Tasks data source of rows
// with a status, a due date and an assignee, a Handbook page of nested
// content, people, and an instance offering every tool.
type env struct {
	s        *standin
	in       *instance
	tasks    *database
	handbook *page
}

func newEnv(t *testing.T) *env {
	s := newStandin(t)
	root, _ := workspace(s, 0, 0)
	tasks := s.addDatabase(root.id, "Sprint", map[string]string{"Name": "title", "Status": "status", "Due": "date", "Assignee": "people", "Done": "checkbox"})
	tasks.options["Status"] = []string{"Not started", "In progress", "Done"}
	for i := range 9 {
		s.addPage("data_source_id", tasks.id, fmt.Sprintf("task %d", i), map[string]any{
			"Status": map[string]any{"id": "s", "type": "status", "status": map[string]any{"name": tasks.options["Status"][i%3]}},
			"Due":    map[string]any{"id": "d", "type": "date", "date": map[string]any{"start": fmt.Sprintf("2026-01-%02d", 20-i)}},
		})
	}
	hb := s.addPage("page_id", root.id, "Handbook", nil)
	s.mu.Lock()
	now := s.now()
	item := &block{id: s.newID(), typ: "bulleted_list_item", text: "item", color: "default", created: now}
	toggle := &block{id: s.newID(), typ: "toggle", text: "More", color: "default", created: now}
	s.children[hb.id] = []*block{
		{id: s.newID(), typ: "heading_1", text: "Welcome", color: "default", created: now},
		item, toggle,
		{id: s.newID(), typ: "code", text: "x := 1", language: "go", created: now},
		{id: s.newID(), typ: "to_do", text: "done", checked: true, color: "default", created: now},
	}
	s.children[item.id] = []*block{{id: s.newID(), typ: "bulleted_list_item", text: "nested", color: "default", created: now}}
	s.children[toggle.id] = []*block{{id: s.newID(), typ: "paragraph", text: "hidden", color: "default", created: now}}
	s.mu.Unlock()
	s.addUsers(6)
	return &env{s: s, in: build(t, s, "notion", "toolsets: [all]"), tasks: tasks, handbook: hb}
}

// url is a Notion URL of a page or database id.
func notionURL(title, id string) string {
	return "https://www.notion.so/acme/" + title + "-" + strings.ReplaceAll(id, "-", "")
}

// call runs tool and checks its result against the tool's output schema.
func (e *env) call(t *testing.T, tool, args string) outcome {
	t.Helper()
	o := e.in.do(t, "t1", tool, args, "op-"+t.Name()+"-"+tool+args)
	if o.err == nil {
		var schema jsonschema.Schema
		if err := json.Unmarshal(e.in.tool(t, tool).OutputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		b, _ := json.Marshal(o.res.Structured)
		json.Unmarshal(b, &v)
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s: the result is not as its output schema says: %v\n%s", tool, err, b)
		}
	}
	return o
}

// Toolsets select the tools an instance offers: the defaults leave out
// users and lifecycle, read_only keeps the tools that read, all is every
// tool; a toolset the type lacks is a config error naming the known.
func TestToolsetsSelectTools(t *testing.T) {
	s := newStandin(t)
	names := func(in *instance) string {
		var out []string
		for _, tl := range in.c.Tools() {
			out = append(out, tl.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(build(t, s, "notion", "")); got != "search,read_page,create_page,append_block,append_markdown,update_page,get_data_source,query_database,list_comments,add_comment" {
		t.Errorf("defaults: %s", got)
	}
	if got := names(build(t, s, "notion", "read_only: true\ntoolsets: [all]")); got != "search,read_page,get_data_source,query_database,list_comments,list_users,get_user" {
		t.Errorf("read_only: %s", got)
	}
	if got := names(build(t, s, "notion", "toolsets: [users, lifecycle]")); got != "list_users,get_user,archive_page,restore_page,move_page" {
		t.Errorf("users, lifecycle: %s", got)
	}
	if n := len(build(t, s, "notion", "toolsets: [all]").c.Tools()); n != 15 {
		t.Errorf("all: %d tools", n)
	}
}

// task is a row of the README's table: what people ask, the tools that
// answer it, and a test of it against the stand-in.
type task struct {
	ask   string
	tools []string
	run   func(t *testing.T, e *env)
}

var tasks = []task{
	{"find the page about X", []string{"search"}, func(t *testing.T, e *env) {
		l := decode[saas.List[model.Page]](t, e.call(t, "search", `{"query":"handbook"}`))
		if len(l.Items) != 1 || l.Items[0].Title != "Handbook" {
			t.Fatalf("found %+v", l.Items)
		}
	}},
	{"read this page", []string{"read_page"}, func(t *testing.T, e *env) {
		c := decode[notion.PageContent](t, e.call(t, "read_page", fmt.Sprintf(`{"page":%q}`, notionURL("Handbook", e.handbook.id))))
		want := "# Welcome\n- item\n  - nested\n- More\n  hidden\n```go\nx := 1\n```\n- [x] done\n"
		if c.Markdown != want || c.Page.Title != "Handbook" || c.Blocks != 7 || c.NextCursor != "" {
			t.Fatalf("read %d blocks, cursor %q:\n%s\nwant:\n%s", c.Blocks, c.NextCursor, c.Markdown, want)
		}
	}},
	{"what's in this database / its fields", []string{"search", "get_data_source"}, func(t *testing.T, e *env) {
		sc := decode[notion.Schema](t, e.call(t, "get_data_source", fmt.Sprintf(`{"database":%q}`, notionURL("Sprint", e.tasks.dbID)+"?v=0123456789abcdef0123456789abcdef")))
		i := slices.IndexFunc(sc.Fields, func(f notion.Field) bool { return f.Name == "Status" })
		if sc.Title != "Sprint" || len(sc.Fields) != 5 || i < 0 || sc.Fields[i].Type != "status" || strings.Join(sc.Fields[i].Options, ",") != "Not started,In progress,Done" {
			t.Fatalf("schema %+v", sc)
		}
	}},
	{"tasks where Status is not Done sorted by due date", []string{"query_database"}, func(t *testing.T, e *env) {
		ref := decode[saas.List[model.Database]](t, e.call(t, "search", `{"object":"database","query":"Sprint"}`)).Items[0].Ref
		args := fmt.Sprintf(`{"database":%q,"filter":{"property":"Status","status":{"does_not_equal":"Done"}},"sorts":[{"property":"Due","direction":"ascending"}],"limit":2`, ref)
		titles, pages := walk(t, e.in, "query_database", args+"}")
		if pages != 3 || strings.Join(titles, ",") != "task 7,task 6,task 4,task 3,task 1,task 0" {
			t.Fatalf("%d pages: %v", pages, titles)
		}
	}},
	{"create a page with this content", []string{"create_page"}, func(t *testing.T, e *env) {
		md := "# Plan\n\nWe **ship** on _Friday_, see [the doc](https://acme.example/doc).\n\n- one\n- two\n1. first\n- [ ] todo\n> quoted\n\n```python\nprint(1)\n```\n---"
		pg := decode[model.Page](t, e.call(t, "create_page", fmt.Sprintf(`{"parent":%q,"title":"Plan","content":%q}`, e.handbook.id, md)))
		got := strings.Join(e.s.blocksOf(pg.ExternalID), "|")
		want := "heading_1:Plan|paragraph:We ship on Friday, see the doc.|bulleted_list_item:one|bulleted_list_item:two|numbered_list_item:first|to_do:todo|quote:quoted|code:print(1)|divider:"
		if got != want {
			t.Fatalf("blocks\n got %s\nwant %s", got, want)
		}
		c := decode[notion.PageContent](t, e.call(t, "read_page", fmt.Sprintf(`{"page":%q}`, pg.Ref)))
		if !strings.Contains(c.Markdown, "```python\nprint(1)\n```") {
			t.Fatalf("read back:\n%s", c.Markdown)
		}
	}},
	{"add these notes to the page", []string{"append_markdown", "append_block"}, func(t *testing.T, e *env) {
		ref := decode[saas.List[model.Page]](t, e.call(t, "search", `{"query":"handbook"}`)).Items[0].Ref
		a := decode[notion.Appended](t, e.call(t, "append_markdown", fmt.Sprintf(`{"parent":%q,"markdown":"## Notes\n- a\n- b"}`, ref)))
		if len(a.Blocks) != 3 || a.Blocks[0].Type != "heading_2" || a.Blocks[2].Text != "b" || a.ParentRef != ref {
			t.Fatalf("appended %+v", a)
		}
		b := decode[model.Block](t, e.call(t, "append_block", fmt.Sprintf(`{"parent":%q,"type":"to_do","text":"call back"}`, ref)))
		if got := e.s.blocksOf(e.handbook.id); got[len(got)-1] != "to_do:call back" || b.Type != "to_do" {
			t.Fatalf("blocks %v", got)
		}
	}},
	{"mark it Done / set the due date / assign", []string{"list_users", "update_page"}, func(t *testing.T, e *env) {
		users := decode[saas.List[model.User]](t, e.call(t, "list_users", `{}`)).Items
		ref := decode[saas.List[model.Page]](t, e.call(t, "search", `{"query":"task 4"}`)).Items[0].Ref
		pg := decode[model.Page](t, e.call(t, "update_page", fmt.Sprintf(`{"page":%q,"properties":{"Status":"Done","Due":"2026-02-01","Assignee":[%q],"Done":true}}`, ref, users[2].Ref)))
		if pg.Properties["Status"] != "Done" || pg.Properties["Due"] != "2026-02-01T00:00:00Z" || pg.Properties["Done"] != true || fmt.Sprint(pg.Properties["Assignee"]) != "["+users[2].ExternalID+"]" {
			t.Fatalf("updated %+v", pg.Properties)
		}
		_, err := e.in.call(t, "t1", "update_page", fmt.Sprintf(`{"page":%q,"properties":{"Status":"Shipped"}}`, ref), "op-bad-status")
		if err == nil || !strings.Contains(err.Error(), "Shipped") {
			t.Fatalf("an unknown status: %v", err)
		}
	}},
	{"archive it / restore it", []string{"archive_page", "restore_page"}, func(t *testing.T, e *env) {
		ref := decode[saas.List[model.Page]](t, e.call(t, "search", `{"query":"task 5"}`)).Items[0].Ref
		pg := decode[model.Page](t, e.call(t, "archive_page", fmt.Sprintf(`{"page":%q}`, ref)))
		if pg.ProviderMetadata["in_trash"] != true || len(decode[saas.List[model.Page]](t, e.call(t, "search", `{"query":"task 5"}`)).Items) != 0 {
			t.Fatalf("archived %+v", pg)
		}
		pg = decode[model.Page](t, e.call(t, "restore_page", fmt.Sprintf(`{"page":%q}`, ref)))
		if pg.ProviderMetadata["in_trash"] != nil {
			t.Fatalf("restored %+v", pg)
		}
	}},
	{"move it under another page", []string{"move_page"}, func(t *testing.T, e *env) {
		ref := decode[saas.List[model.Page]](t, e.call(t, "search", `{"query":"task 1"}`)).Items[0].Ref
		pg := decode[model.Page](t, e.call(t, "move_page", fmt.Sprintf(`{"page":%q,"parent":%q}`, ref, e.handbook.id)))
		if pg.ProviderMetadata["parent_type"] != "page_id" || !slices.Contains(e.s.blocksOf(e.handbook.id), "child_page:task 1") {
			t.Fatalf("moved %+v", pg)
		}
	}},
	{"comment on it / read the comments", []string{"add_comment", "list_comments"}, func(t *testing.T, e *env) {
		for i := range 5 {
			e.s.addCommentBy("00000000-0000-4000-9000-000000000001", e.handbook.id, "", fmt.Sprint("remark ", i))
		}
		cm := decode[model.Comment](t, e.call(t, "add_comment", fmt.Sprintf(`{"on":%q,"text":"Looks **good**"}`, notionURL("Handbook", e.handbook.id))))
		if cm.Text != "Looks good" || cm.ThreadRef == "" {
			t.Fatalf("comment %+v", cm)
		}
		reply := decode[model.Comment](t, e.call(t, "add_comment", fmt.Sprintf(`{"discussion":%q,"text":"and shipped"}`, cm.ThreadRef)))
		if reply.ThreadRef != cm.ThreadRef {
			t.Fatalf("reply in %q, not %q", reply.ThreadRef, cm.ThreadRef)
		}
		cursor, texts := "", []string{}
		for pages := 1; ; pages++ {
			l := decode[saas.List[model.Comment]](t, e.call(t, "list_comments", fmt.Sprintf(`{"on":%q,"limit":3,"cursor":%q}`, e.handbook.id, cursor)))
			for _, c := range l.Items {
				texts = append(texts, c.Text)
			}
			if cursor = l.NextCursor; cursor == "" {
				if pages != 3 || len(texts) != 7 || texts[6] != "and shipped" {
					t.Fatalf("%d pages: %v", pages, texts)
				}
				return
			}
		}
	}},
	{"who is in the workspace", []string{"list_users", "get_user"}, func(t *testing.T, e *env) {
		var names []string
		cursor := ""
		for pages := 1; ; pages++ {
			l := decode[saas.List[model.User]](t, e.call(t, "list_users", fmt.Sprintf(`{"limit":3,"cursor":%q}`, cursor)))
			for _, u := range l.Items {
				names = append(names, u.Name)
			}
			if cursor = l.NextCursor; cursor == "" {
				if pages != 3 || len(names) != 7 || names[6] != "Legate" {
					t.Fatalf("%d pages: %v", pages, names)
				}
				break
			}
		}
		u := decode[model.User](t, e.call(t, "get_user", `{"user":"00000000-0000-4000-9000-000000000003"}`))
		if u.Name != "person 3" || u.Email != "p3@acme.example" || u.Contract != "user.v1" {
			t.Fatalf("user %+v", u)
		}
	}},
}

func TestTasks(t *testing.T) {
	for _, tk := range tasks {
		t.Run(tk.ask, func(t *testing.T) { tk.run(t, newEnv(t)) })
	}
}

// taskRow is a row of the README's task table: "ask" | `tool`, `tool`.
var taskRow = regexp.MustCompile("^\\| \"([^\"]+)\" \\| (.+) \\|$")

// The README's table of what people ask names, on each row, the tools
// TestTasks runs for that task; every tool it names is in the catalog,
// and every tool of the catalog is in the table.
func TestReadmeTaskTable(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := newStandin(t)
	catalog := build(t, s, "notion", "").c.(connectors.ToolCatalog).ToolCatalog()
	covered := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(string(raw), "\n") {
		m := taskRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		i := slices.IndexFunc(tasks, func(tk task) bool { return tk.ask == m[1] })
		if i < 0 {
			t.Errorf("README task %q has no case in TestTasks", m[1])
			continue
		}
		var named []string
		for _, tool := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[2], -1) {
			named = append(named, tool[1])
			covered[tool[1]] = true
			if !slices.ContainsFunc(catalog, func(tl connectors.Tool) bool { return tl.Name == tool[1] }) {
				t.Errorf("README task %q names %s, which the catalog lacks", m[1], tool[1])
			}
		}
		if !slices.Equal(named, tasks[i].tools) {
			t.Errorf("README task %q names %v; TestTasks runs %v", m[1], named, tasks[i].tools)
		}
	}
	if rows != len(tasks) {
		t.Errorf("README's table has %d tasks, TestTasks %d", rows, len(tasks))
	}
	for _, tl := range catalog {
		if !covered[tl.Name] {
			t.Errorf("tool %s is in no task of the README", tl.Name)
		}
	}
}
