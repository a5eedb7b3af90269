package notion_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// onceFixture is a workspace for a thousand writes of each write tool:
// a data source, fifty pages to append and comment to, and a thousand
// pages for the page tools (by their Notion ids) when tool is one.
type onceFixture struct {
	s               *standin
	db              *database
	notes, loose    []*page
	trashed, movers []*page
	target          *page
}

func newOnceFixture(t *testing.T, n int, tool string) *onceFixture {
	s := newStandin(t)
	root, db := workspace(s, 0, 0)
	f := &onceFixture{s: s, db: db, target: s.addPage("page_id", root.id, "Archive", nil)}
	for i := range 50 {
		f.notes = append(f.notes, s.addPage("page_id", root.id, fmt.Sprint("note ", i), nil))
	}
	for i := range n {
		switch tool {
		case "update_page", "archive_page":
			f.loose = append(f.loose, s.addPage("data_source_id", db.id, fmt.Sprint("row ", i), nil))
		case "move_page":
			f.movers = append(f.movers, s.addPage("page_id", root.id, fmt.Sprint("mover ", i), nil))
		case "restore_page":
			p := s.addPage("data_source_id", db.id, fmt.Sprint("old ", i), nil)
			p.inTrash = true
			f.trashed = append(f.trashed, p)
		}
	}
	return f
}

// onceCase is a write tool's call for iteration i, and a check that its
// result is what the stand-in holds.
type onceCase struct {
	args  func(f *onceFixture, i int) string
	check func(t *testing.T, f *onceFixture, i int, got map[string]any)
}

var onceCases = map[string]onceCase{
	"create_page": {
		func(f *onceFixture, i int) string {
			return fmt.Sprintf(`{"parent":%q,"title":"write %d","content":"body %d"}`, f.db.dbID, i, i)
		},
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			f.s.mu.Lock()
			p := f.s.pages[got["external_id"].(string)]
			f.s.mu.Unlock()
			if p == nil || p.title != fmt.Sprint("write ", i) || got["title"] != p.title {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
	"append_block": {
		func(f *onceFixture, i int) string {
			return fmt.Sprintf(`{"parent":%q,"text":"write %d"}`, f.notes[i%50].id, i)
		},
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			if got["text"] != fmt.Sprint("write ", i) || !f.holds(f.notes[i%50].id, got["external_id"].(string)) {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
	"append_markdown": {
		func(f *onceFixture, i int) string {
			return fmt.Sprintf(`{"parent":%q,"markdown":"- write %d\n- and more"}`, f.notes[i%50].id, i)
		},
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			blocks := got["blocks"].([]any)
			first := blocks[0].(map[string]any)
			if len(blocks) != 2 || first["text"] != fmt.Sprint("write ", i) || !f.holds(f.notes[i%50].id, first["external_id"].(string)) {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
	"add_comment": {
		func(f *onceFixture, i int) string {
			return fmt.Sprintf(`{"on":%q,"text":"write %d"}`, f.notes[i%50].id, i)
		},
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			f.s.mu.Lock()
			defer f.s.mu.Unlock()
			if got["text"] != fmt.Sprint("write ", i) || !slices.ContainsFunc(f.s.comments, func(c *comment) bool { return c.id == got["external_id"] }) {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
	"update_page": {
		func(f *onceFixture, i int) string {
			return fmt.Sprintf(`{"page":%q,"properties":{"Status":"S%d","Done":%v}}`, f.loose[i].id, i, i%2 == 0)
		},
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			props := got["properties"].(map[string]any)
			if props["Status"] != fmt.Sprint("S", i) || props["Done"] != (i%2 == 0) {
				t.Fatalf("write %d: got %v", i, props)
			}
		},
	},
	"archive_page": {
		func(f *onceFixture, i int) string { return fmt.Sprintf(`{"page":%q}`, f.loose[i].id) },
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			if got["provider_metadata"].(map[string]any)["in_trash"] != true || !f.loose[i].inTrash {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
	"restore_page": {
		func(f *onceFixture, i int) string { return fmt.Sprintf(`{"page":%q}`, f.trashed[i].id) },
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			if got["provider_metadata"].(map[string]any)["in_trash"] != nil || f.trashed[i].inTrash {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
	"move_page": {
		func(f *onceFixture, i int) string {
			return fmt.Sprintf(`{"page":%q,"parent":%q}`, f.movers[i].id, f.target.id)
		},
		func(t *testing.T, f *onceFixture, i int, got map[string]any) {
			if f.movers[i].parentID != f.target.id || got["external_id"] != f.movers[i].id {
				t.Fatalf("write %d: got %v", i, got)
			}
		},
	},
}

// holds reports whether block id is under parent.
func (f *onceFixture) holds(parent, id string) bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return slices.ContainsFunc(f.s.children[parent], func(b *block) bool { return b.id == id })
}

// writeTools are the catalog's tools that write, each with its case; a
// write tool without one fails the test.
func writeTools(t *testing.T) map[string]onceCase {
	catalog := build(t, newStandin(t), "notion", "").c.(connectors.ToolCatalog).ToolCatalog()
	out := map[string]onceCase{}
	for _, tool := range catalog {
		if tool.Class == legate.ClassRead {
			continue
		}
		tc, ok := onceCases[tool.Name]
		if !ok {
			t.Errorf("write tool %s has no case here", tool.Name)
			continue
		}
		out[tool.Name] = tc
	}
	return out
}

// loseAndRetry runs n writes of tool on f, each of whose first attempt
// Notion performs and then loses the answer of, and checks that each is
// written once and returned to the retry. config is added to the
// instances'.
func loseAndRetry(t *testing.T, f *onceFixture, tool string, tc onceCase, n int, config string) {
	retrying := build(t, f.s, "notion", "toolsets: [all]\n"+config)
	giving := build(t, f.s, "notion", "toolsets: [all]\nmax_attempts: 1\n"+config)
	giving.key, giving.ops = retrying.key, retrying.ops
	var mu sync.Mutex
	lose := false
	f.s.afterWrite = func(label string, w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if lose {
			lose = false
			hangUp(w)
			return true
		}
		return false
	}
	for i := range n {
		args, op := tc.args(f, i), fmt.Sprintf("op-%d", i)
		before := f.s.writeCount()
		mu.Lock()
		lose = true
		mu.Unlock()
		_, err := giving.call(t, "t1", tool, args, op)
		wantCode(t, err, legate.CodeTransient)
		got := decode[map[string]any](t, retrying.do(t, "t1", tool, args, op))
		if w := f.s.writeCount() - before; w != 1 {
			t.Fatalf("write %d: %d writes at Notion", i, w)
		}
		tc.check(t, f, i, got)
	}
}

// For every write tool of the catalog, a thousand times: Notion performs
// the write and the answer is lost (the connection hangs up), the client
// gives up (max_attempts: 1), and calls again with the same idempotency
// key on an instance sharing the operation record. Each time Notion is
// written exactly once and the retry returns that write.
func TestEveryWriteOnceOverAThousandLostAnswers(t *testing.T) {
	const n = 1000
	for tool, tc := range writeTools(t) {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			loseAndRetry(t, newOnceFixture(t, n, tool), tool, tc, n, "")
			t.Logf("%d lost answers in %v", n, time.Since(start))
		})
	}
}
