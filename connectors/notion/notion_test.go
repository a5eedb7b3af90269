package notion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/notion"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{
		Type:        "notion",
		Config:      "base_url: http://127.0.0.1:9\nallow_private_networks: true",
		Credentials: map[string]string{"token": token},
	})
}

func TestConfigIsValidated(t *testing.T) {
	tests := map[string]string{
		"base_url":       "base_url: ftp://x",
		"notion_version": "notion_version: latest",
		"old version":    "notion_version: 2022-06-28",
		"toolsets":       "toolsets: [pages, wiki]",
		"max_attempts":   "max_attempts: 11",
		"private":        "base_url: http://127.0.0.1:9",
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			ct, _ := connectors.Lookup("notion")
			var node yaml.Node
			if err := yaml.Unmarshal([]byte(cfg), &node); err != nil {
				t.Fatal(err)
			}
			_, err := connectors.Build(ct, "notion", &node, "c")
			if err == nil || !strings.Contains(err.Error(), strings.SplitN(cfg, ":", 2)[0]) {
				t.Fatalf("%q: error %v; want one naming the field", cfg, err)
			}
		})
	}
}

// An instance built without Validate (as no gateway path does) with a
// base_url that is not a URL sends nothing anywhere, api.notion.com
// included.
func TestUnparsableBaseURLSendsNothing(t *testing.T) {
	ct, _ := connectors.Lookup("notion")
	c, err := ct.New(connectors.Instance{ID: "notion", Config: &notion.Config{BaseURL: "::no", NotionVersion: "2022-06-28", MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Validate() == nil {
		t.Fatal("base_url ::no validated")
	}
	var search connectors.Tool
	for _, tl := range c.Tools() {
		if tl.Name == "search" {
			search = tl
		}
	}
	_, err = search.Run(context.Background(), &connectors.Call{Tool: "search", Args: json.RawMessage(`{}`), Credentials: connectortest.Creds{"token": token}})
	wantCode(t, err, legate.CodeInvalidArgument)
}

type instance struct {
	c   connectors.Connector
	key []byte
	ops connectors.Operations
}

func build(t testing.TB, s *standin, id, extra string) *instance {
	t.Helper()
	cfg := fmt.Sprintf("base_url: %s\nallow_private_networks: true\nretry_backoff: 1ms\n%s", s.srv.URL, extra)
	return &instance{c: connectortest.Build(t, "notion", id, cfg), key: []byte("key of " + id), ops: saas.NewMemoryOperations()}
}

func (in *instance) tool(t testing.TB, name string) connectors.Tool {
	for _, tl := range in.c.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return connectors.Tool{}
}

func (in *instance) call(t testing.TB, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return in.tool(t, tool).Run(context.Background(), &connectors.Call{
		Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
		Credentials: connectortest.Creds{"token": token}, OperationID: op,
		Key: func() []byte { return in.key }, Operations: in.ops,
	})
}

type outcome struct {
	res *legate.Result
	err error
}

func (in *instance) do(t testing.TB, tenant, tool, args, op string) outcome {
	t.Helper()
	res, err := in.call(t, tenant, tool, args, op)
	return outcome{res, err}
}

func decode[T any](t testing.TB, o outcome) T {
	t.Helper()
	if o.err != nil {
		t.Fatal(o.err)
	}
	b, _ := json.Marshal(o.res.Structured)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t testing.TB, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

// workspace seeds a team page holding a database of rows and n child pages.
func workspace(s *standin, rows, children int) (root *page, db *database) {
	root = s.addPage("workspace", "", "Team", nil)
	db = s.addDatabase(root.id, "Tasks", map[string]string{"Name": "title", "Status": "select", "Done": "checkbox"})
	for i := range rows {
		s.addPage("data_source_id", db.id, fmt.Sprintf("task %d", i), map[string]any{
			"Status": map[string]any{"id": "s", "type": "select", "select": map[string]any{"id": "o1", "name": "Open", "color": "red"}},
			"Done":   map[string]any{"id": "d", "type": "checkbox", "checkbox": i%2 == 0},
		})
	}
	for i := range children {
		s.addPage("page_id", root.id, fmt.Sprintf("note %d", i), nil)
	}
	return root, db
}

// walk calls a list tool page by page and returns the items' titles.
func walk(t *testing.T, in *instance, tool, args string) (titles []string, pages int) {
	t.Helper()
	cursor := ""
	for {
		a := strings.TrimSuffix(args, "}")
		if cursor != "" {
			a += fmt.Sprintf(`,"cursor":%q`, cursor)
		}
		l := decode[saas.List[map[string]any]](t, in.do(t, "t1", tool, a+"}", ""))
		pages++
		for _, it := range l.Items {
			titles = append(titles, it["title"].(string))
		}
		if l.NextCursor == "" {
			return titles, pages
		}
		if strings.Count(l.NextCursor, "-") == 4 {
			t.Fatalf("next_cursor %q is Notion's cursor", l.NextCursor)
		}
		cursor = l.NextCursor
		if pages > 20 {
			t.Fatal("no end")
		}
	}
}

func TestSearchWalksPages(t *testing.T) {
	s := newStandin(t)
	workspace(s, 0, 7) // Team and 7 notes
	in := build(t, s, "notion", "")
	titles, pages := walk(t, in, "search", `{"query":"note","limit":2}`)
	want := "note 6,note 5,note 4,note 3,note 2,note 1,note 0"
	if pages != 4 || strings.Join(titles, ",") != want {
		t.Fatalf("%d pages: %v; want 4 pages of %s", pages, titles, want)
	}
	l := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, ""))
	if len(l.Items) != 1 || l.Items[0].Contract != "database.v1" || l.Items[0].Title != "Tasks" || l.Items[0].Properties["Status"] != "select" ||
		!strings.HasPrefix(l.Items[0].Ref, "data_source://") || !strings.HasPrefix(l.Items[0].ParentRef, "page://") {
		t.Fatalf("databases %+v", l.Items)
	}
	p := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"note 3"}`, ""))
	if len(p.Items) != 1 || p.Items[0].Contract != "page.v1" || !strings.HasPrefix(p.Items[0].Ref, "page://") || p.Items[0].URL == "" || p.Items[0].CreatedAt.IsZero() {
		t.Fatalf("pages %+v", p.Items)
	}
	_, err := in.call(t, "t1", "search", `{"object":"block"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
}

func TestQueryDatabaseWalksPages(t *testing.T) {
	s := newStandin(t)
	_, db := workspace(s, 10, 0)
	in := build(t, s, "notion", "")
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
	titles, pages := walk(t, in, "query_database", fmt.Sprintf(`{"database":%q,"limit":3}`, dbRef))
	if pages != 4 || len(titles) != 10 || titles[0] != "task 9" || titles[9] != "task 0" {
		t.Fatalf("%d pages: %v", pages, titles)
	}
	l := decode[saas.List[model.Page]](t, in.do(t, "t1", "query_database", fmt.Sprintf(`{"database":%q,"title_contains":"task 4","edited_since":"2000-01-01T00:00:00Z"}`, dbRef), ""))
	if len(l.Items) != 1 {
		t.Fatalf("filtered: %+v", l.Items)
	}
	row := l.Items[0]
	if row.Title != "task 4" || row.Properties["Status"] != "Open" || row.Properties["Done"] != true || row.Properties["Name"] != "task 4" {
		t.Fatalf("row %+v", row)
	}
	if parent := row.ParentRef; parent != dbRef {
		t.Errorf("parent_ref %q; want the database's ref %q", parent, dbRef)
	}
	_ = db
	_, err := in.call(t, "t1", "query_database", fmt.Sprintf(`{"database":%q,"edited_since":"yesterday"}`, dbRef), "")
	wantCode(t, err, legate.CodeInvalidArgument)
}

func TestCursorsAndRefsStayWhereTheyWereMade(t *testing.T) {
	s := newStandin(t)
	workspace(s, 5, 5)
	a, b := build(t, s, "notion", ""), build(t, s, "notion-2", "")
	dbRef := func(in *instance, tenant string) string {
		return decode[saas.List[model.Database]](t, in.do(t, tenant, "search", `{"object":"database"}`, "")).Items[0].Ref
	}
	for _, tool := range []string{"search", "query_database"} {
		t.Run(tool, func(t *testing.T) {
			// args is the tool's arguments for a caller of in and tenant.
			args := func(in *instance, tenant, cursor string) string {
				a := fmt.Sprintf(`{"limit":2,"cursor":%q`, cursor)
				if tool == "query_database" {
					a += fmt.Sprintf(`,"database":%q`, dbRef(in, tenant))
				}
				return a + "}"
			}
			l := decode[saas.List[map[string]any]](t, a.do(t, "t1", tool, args(a, "t1", ""), ""))
			if l.NextCursor == "" {
				t.Fatal("no next_cursor")
			}
			if _, err := a.call(t, "t1", tool, args(a, "t1", l.NextCursor), ""); err != nil {
				t.Fatal(err)
			}
			other, elsewhere := args(a, "t2", l.NextCursor), args(b, "t1", l.NextCursor)
			before := s.count("search") + s.count("query")
			_, err := a.call(t, "t2", tool, other, "")
			wantCode(t, err, legate.CodeInvalidArgument)
			_, err = b.call(t, "t1", tool, elsewhere, "")
			wantCode(t, err, legate.CodeInvalidArgument)
			if s.count("search")+s.count("query") != before {
				t.Errorf("requests sent for refused cursors")
			}
		})
	}
	pageRef := decode[saas.List[model.Page]](t, a.do(t, "t1", "search", `{"query":"note 1"}`, "")).Items[0].Ref
	for name, call := range map[string]func() error{
		"other tenant": func() error {
			_, err := a.call(t, "t2", "append_block", fmt.Sprintf(`{"parent":%q,"text":"x"}`, pageRef), "op-1")
			return err
		},
		"other instance": func() error {
			_, err := b.call(t, "t1", "create_page", fmt.Sprintf(`{"parent":%q,"title":"x"}`, pageRef), "op-2")
			return err
		},
		"not a ref": func() error {
			_, err := a.call(t, "t1", "create_page", `{"parent":"Team-page","title":"x"}`, "op-3")
			return err
		},
		"wrong kind": func() error {
			_, err := a.call(t, "t1", "query_database", fmt.Sprintf(`{"database":%q}`, pageRef), "")
			return err
		},
	} {
		t.Run(name, func(t *testing.T) { wantCode(t, call(), legate.CodeNotFound) })
	}
	if s.writeCount() != 0 || s.count("query") != 2 {
		t.Fatalf("%d writes, %d queries for refused refs", s.writeCount(), s.count("query"))
	}
}

func TestCreatePageAndAppendBlock(t *testing.T) {
	s := newStandin(t)
	root, _ := workspace(s, 1, 0)
	in := build(t, s, "notion", "")
	rootRef := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"Team"}`, "")).Items[0].Ref
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref

	pg := decode[model.Page](t, in.do(t, "t1", "create_page", fmt.Sprintf(`{"parent":%q,"title":"Plan","content":"First.\n\nSecond."}`, rootRef), "op-1"))
	if pg.Title != "Plan" || pg.ParentRef != rootRef || pg.Contract != "page.v1" {
		t.Fatalf("created %+v", pg)
	}
	got := strings.Join(s.blocksOf(pg.ExternalID), "|")
	if got != "paragraph:First.|paragraph:Second." {
		t.Fatalf("the page holds %s; want the paragraphs, and no marker", got)
	}
	row := decode[model.Page](t, in.do(t, "t1", "create_page", fmt.Sprintf(`{"parent":%q,"title":"Row"}`, dbRef), "op-2"))
	if row.Title != "Row" || row.ParentRef != dbRef || row.Properties["Name"] != "Row" {
		t.Fatalf("row %+v", row)
	}
	bl := decode[model.Block](t, in.do(t, "t1", "append_block", fmt.Sprintf(`{"parent":%q,"type":"to_do","text":"ship it","checked":true}`, pg.Ref), "op-3"))
	if bl.Type != "to_do" || bl.Text != "ship it" || bl.ParentRef != pg.Ref || bl.Contract != "block.v1" || bl.ProviderMetadata["checked"] != true {
		t.Fatalf("block %+v", bl)
	}
	// A block's ref takes appends too (nested content).
	if _, err := in.call(t, "t1", "append_block", fmt.Sprintf(`{"parent":%q,"text":"under"}`, bl.Ref), "op-4"); err != nil {
		t.Fatal(err)
	}
	// The same operation again returns the first outcome without writing.
	writes := s.writeCount()
	again := decode[model.Block](t, in.do(t, "t1", "append_block", fmt.Sprintf(`{"parent":%q,"type":"to_do","text":"ship it","checked":true}`, pg.Ref), "op-3"))
	if again.Ref != bl.Ref || s.writeCount() != writes {
		t.Fatalf("replay: %+v after %d writes", again, s.writeCount())
	}
	for name, args := range map[string]string{
		"empty title":  fmt.Sprintf(`{"parent":%q,"title":" "}`, rootRef),
		"title length": fmt.Sprintf(`{"parent":%q,"title":%q}`, rootRef, strings.Repeat("x", 2001)),
	} {
		_, err := in.call(t, "t1", "create_page", args, "op-"+name)
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	for name, args := range map[string]string{
		"bad type":        fmt.Sprintf(`{"parent":%q,"type":"image","text":"x"}`, pg.Ref),
		"checked para":    fmt.Sprintf(`{"parent":%q,"text":"x","checked":true}`, pg.Ref),
		"empty text":      fmt.Sprintf(`{"parent":%q,"text":""}`, pg.Ref),
		"database parent": fmt.Sprintf(`{"parent":%q,"text":"x"}`, dbRef),
	} {
		_, err := in.call(t, "t1", "append_block", args, "op-"+name)
		if name == "database parent" {
			wantCode(t, err, legate.CodeNotFound)
			continue
		}
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	_ = root
}

func TestLongTextIsSplitIntoRuns(t *testing.T) {
	s := newStandin(t)
	workspace(s, 0, 1)
	in := build(t, s, "notion", "")
	ref := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"note 0"}`, "")).Items[0].Ref
	long := strings.Repeat("é", 4500)
	bl := decode[model.Block](t, in.do(t, "t1", "append_block", fmt.Sprintf(`{"parent":%q,"text":%q}`, ref, long), "op-long"))
	if bl.Text != long {
		t.Fatalf("text of %d characters came back as %d", len([]rune(long)), len([]rune(bl.Text)))
	}
}

func TestRequestsGoToBaseURLWithVersion(t *testing.T) {
	s := newStandin(t)
	workspace(s, 0, 1)
	s.version = "2026-03-11"
	// base_url with a path: a proxy that serves the API under /notion.
	proxy := httptest.NewServer(http.StripPrefix("/notion", s.srv.Config.Handler))
	t.Cleanup(proxy.Close)
	in := &instance{c: connectortest.Build(t, "notion", "notion", fmt.Sprintf("base_url: %s/notion\nallow_private_networks: true\nnotion_version: 2026-03-11", proxy.URL)),
		key: []byte("k"), ops: saas.NewMemoryOperations()}
	l := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{}`, ""))
	if len(l.Items) != 2 {
		t.Fatalf("items %+v", l.Items)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.versions["2026-03-11"] || len(s.versions) != 1 {
		t.Fatalf("Notion-Version sent: %v", s.versions)
	}
}

func TestResultsMatchOutputSchemas(t *testing.T) {
	s := newStandin(t)
	workspace(s, 3, 3)
	in := build(t, s, "notion", "")
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
	pgRef := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"note 0"}`, "")).Items[0].Ref
	for _, tc := range []struct{ tool, args string }{
		{"search", `{"limit":2}`},
		{"search", `{"object":"database"}`},
		{"query_database", fmt.Sprintf(`{"database":%q}`, dbRef)},
		{"create_page", fmt.Sprintf(`{"parent":%q,"title":"t","content":"a\n\nb"}`, pgRef)},
		{"append_block", fmt.Sprintf(`{"parent":%q,"type":"code","text":"x := 1"}`, pgRef)},
	} {
		var schema jsonschema.Schema
		if err := json.Unmarshal(in.tool(t, tc.tool).OutputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := in.call(t, "t1", tc.tool, tc.args, "op-"+tc.tool)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		b, _ := json.Marshal(res.Structured)
		json.Unmarshal(b, &v)
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s %s: %v\n%s", tc.tool, tc.args, err, b)
		}
	}
	var broken jsonschema.Schema
	json.Unmarshal(in.tool(t, "search").OutputSchema, &broken)
	resolved, _ := broken.Resolve(nil)
	if resolved.Validate(map[string]any{"items": []any{map[string]any{"contract": 1}}}) == nil {
		t.Error("search's output schema takes any item")
	}
}
