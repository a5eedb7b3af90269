package notion_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Notion performs the write, but its answer comes after the request's
// timeout: the connector finds the write by its marker instead of
// writing again, and the client gets it.
func TestTimedOutWriteIsDoneOnce(t *testing.T) {
	for _, tc := range []struct{ tool, parent, args, want string }{
		{"create_page", "page", `"title":"once","content":"body"`, "once"},
		{"create_page", "database", `"title":"once"`, "once"},
		{"append_block", "page", `"text":"once"`, "once"},
		{"append_markdown", "page", `"markdown":"- once\n- twice"`, "2 block(s)"},
		{"add_comment", "page", `"text":"once"`, "once"},
		{"update_page", "page", `"title":"once"`, "once"},
	} {
		t.Run(tc.tool+" in a "+tc.parent, func(t *testing.T) {
			s := newStandin(t)
			workspace(s, 2, 2)
			in := build(t, s, "notion", "timeout: 300ms")
			parent := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"Team"}`, "")).Items[0].Ref
			if tc.parent == "database" {
				parent = decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
			}
			first := true
			s.afterWrite = func(label string, w http.ResponseWriter, r *http.Request) bool {
				if first {
					first = false
					<-r.Context().Done() // written; the answer never leaves in time
					return true
				}
				return false
			}
			key := map[string]string{"add_comment": "on", "update_page": "page"}[tc.tool]
			if key == "" {
				key = "parent"
			}
			res, err := in.call(t, "t1", tc.tool, fmt.Sprintf(`{%q:%q,%s}`, key, parent, tc.args), "op-once")
			if err != nil {
				t.Fatal(err)
			}
			if s.writeCount() != 1 || !strings.Contains(res.Text, tc.want) {
				t.Fatalf("%d writes; result %q", s.writeCount(), res.Text)
			}
			if tc.tool == "create_page" && s.count("create") != 1 {
				t.Fatalf("%d create requests", s.count("create"))
			}
		})
	}
}

// A thousand writes, half create_page in a database and half append_block
// on fifty pages, each of whose first attempt Notion performs and then
// loses the answer of; every other call also gives up (max_attempts: 1)
// and is called again with the same idempotency key. Each client gets its
// page or block, and Notion holds exactly one per key.
func TestNoDuplicatesOverAThousandLostAnswers(t *testing.T) {
	s := newStandin(t)
	_, db := workspace(s, 0, 50)
	retrying := build(t, s, "notion", "")
	giving := build(t, s, "notion", "max_attempts: 1")
	giving.key, giving.ops = retrying.key, retrying.ops
	dbRef := decode[saas.List[model.Database]](t, retrying.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
	notes := decode[saas.List[model.Page]](t, retrying.do(t, "t1", "search", `{"query":"note","limit":50}`, "")).Items
	seen := map[string]bool{}
	s.afterWrite = func(label string, w http.ResponseWriter, r *http.Request) bool {
		s.mu.Lock()
		first := !seen[label]
		seen[label] = true
		s.mu.Unlock()
		if first {
			hangUp(w)
		}
		return first
	}
	const writes = 1000
	for i := range writes {
		in := retrying
		if i%4 >= 2 {
			in = giving
		}
		op, label := fmt.Sprintf("op-%d", i), fmt.Sprintf("write %d", i)
		tool, args := "create_page", fmt.Sprintf(`{"parent":%q,"title":%q}`, dbRef, label)
		if i%2 == 1 {
			tool, args = "append_block", fmt.Sprintf(`{"parent":%q,"text":%q}`, notes[i%50].Ref, label)
		}
		res, err := in.call(t, "t1", tool, args, op)
		if in == giving {
			wantCode(t, err, legate.CodeTransient)
			res, err = in.call(t, "t1", tool, args, op)
		}
		got := decode[map[string]any](t, outcome{res, err})
		if got["title"] != label && got["text"] != label {
			t.Fatalf("write %d: got %+v", i, got)
		}
	}
	// Every label is written once: a page in the database, or a block
	// (followed by its marker) under a note.
	count := map[string]int{}
	s.mu.Lock()
	for _, p := range s.pages {
		if p.parentID == db.id {
			count[p.title]++
		}
	}
	for _, n := range notes {
		for _, b := range s.children[n.ExternalID] {
			if strings.HasPrefix(b.text, "write ") {
				count[b.text]++
			}
		}
	}
	total := s.writes
	s.mu.Unlock()
	if len(count) != writes || total != writes {
		t.Fatalf("%d labels written, %d writes; want %d", len(count), total, writes)
	}
	for label, n := range count {
		if n != 1 {
			t.Fatalf("%s written %d times", label, n)
		}
	}
}

// A create whose answer was lost, in a database where many rows of the
// same title were created since, is CONFLICT once the bound of rows read
// is reached: the connector neither reads without end nor writes again.
func TestLostCreateAmongManyNamesakesIsConflict(t *testing.T) {
	s := newStandin(t)
	_, db := workspace(s, 0, 0)
	for range 25 {
		s.addPage("data_source_id", db.id, "same", nil)
	}
	in := build(t, s, "notion", "max_attempts: 1")
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
	s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
		if op == "create" {
			hangUp(w) // lost before Notion wrote
			return true
		}
		return false
	}
	args := fmt.Sprintf(`{"parent":%q,"title":"same"}`, dbRef)
	_, err := in.call(t, "t1", "create_page", args, "op-same")
	wantCode(t, err, legate.CodeTransient)
	_, err = in.call(t, "t1", "create_page", args, "op-same")
	wantCode(t, err, legate.CodeConflict)
	// The namesakes are more than it reads the content of: it says so
	// before reading any.
	if s.writeCount() != 0 || s.count("create") != 1 || s.count("children") != 0 {
		t.Fatalf("%d writes, %d creates, %d content reads", s.writeCount(), s.count("create"), s.count("children"))
	}
}
