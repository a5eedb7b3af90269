package slack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// With markers on, Slack posts the message, but its answer comes after
// the request's timeout: the connector finds the message by its marker
// instead of posting again, and the client gets it.
func TestTimedOutPostIsPostedOnce(t *testing.T) {
	for _, tool := range []string{"post_message", "reply_thread"} {
		t.Run(tool, func(t *testing.T) {
			s := newStandin(t, 1)
			in := build(t, s, "slack", "timeout: 300ms\nmarkers: true")
			ref := in.channelRef(t, "t1", "chan-0")
			args := fmt.Sprintf(`{"channel":%q,"text":"once"}`, ref)
			if tool == "reply_thread" {
				res, err := in.call(t, "t1", "post_message", fmt.Sprintf(`{"channel":%q,"text":"root"}`, ref), "op-root")
				if err != nil {
					t.Fatal(err)
				}
				args = fmt.Sprintf(`{"thread":%q,"text":"once"}`, decode[model.Message](t, res).Ref)
			}
			before := s.postCount()
			s.afterPost = func(n int, w http.ResponseWriter, r *http.Request) bool {
				if n == before+1 {
					<-r.Context().Done() // posted; the answer never leaves in time
					return true
				}
				return false
			}
			res, err := in.call(t, "t1", tool, args, "op-once")
			if err != nil {
				t.Fatal(err)
			}
			m := decode[model.Message](t, res)
			if m.Text != "once" || s.postCount() != before+1 {
				t.Fatalf("got %+v after %d posts; want the one post", m, s.postCount()-before)
			}
			if marks := s.markers("C000"); len(marks) != before+1 {
				t.Fatalf("markers %v", marks)
			}
		})
	}
}

// For every write tool of the catalog, a thousand writes, each of whose
// first attempt Slack performs and then loses the answer of (the
// connection drops): the client gives up (max_attempts 1) and calls again
// with the same idempotency key on an instance sharing the operation
// record. Each retry returns the write, and Slack performed exactly one
// per call. A write tool without a case fails the test.
func TestEveryWriteOnceOverAThousandLostAnswers(t *testing.T) {
	const writes = 1000
	f := newFixture(t, writes, "max_attempts: 1\ntimeout: 2s")
	f.s.loseFirst = true
	retry := build(t, f.s, "slack", "toolsets: [all]")
	retry.key, retry.ops = f.in.key, f.in.ops
	for _, tool := range f.in.c.(connectors.ToolCatalog).ToolCatalog() {
		if tool.Class == legate.ClassRead {
			continue
		}
		t.Run(tool.Name, func(t *testing.T) {
			c, ok := f.cases[tool.Name]
			if !ok || c.method == "" {
				t.Fatalf("no write case for %s", tool.Name)
			}
			if tool.Name == "delete_scheduled" {
				f.s.loseFirst = false
				f.scheduledRef(t, 0) // list the refs before losing answers
				f.s.loseFirst = true
			}
			before := f.s.writeCount(c.method)
			for i := range writes {
				op := fmt.Sprintf("op-%s-%d", tool.Name, i)
				_, err := f.run(t, f.in, tool.Name, i, op)
				if err == nil {
					t.Fatalf("call %d: the lost answer was not lost", i)
				}
				res, err := f.run(t, retry, tool.Name, i, op)
				if err != nil {
					t.Fatalf("retry %d: %v", i, err)
				}
				c.check(t, i, res)
				if n := f.s.writeCount(c.method) - before; n != i+1 {
					t.Fatalf("after %d calls, Slack performed %d writes", i+1, n)
				}
			}
		})
	}
}

// With markers off (the default), nothing any write tool stores in
// Slack holds a marker: no metadata, no legate-operation, no lg1- key.
func TestNoMarkerLeftInSlack(t *testing.T) {
	f := newFixture(t, 3, "")
	for _, tool := range f.in.c.(connectors.ToolCatalog).ToolCatalog() {
		if tool.Class == legate.ClassRead {
			continue
		}
		if _, err := f.run(t, f.in, tool.Name, 1, "op-marker-"+tool.Name); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
	}
	f.s.mu.Lock()
	stored, _ := json.Marshal([]any{f.s.messages, f.s.channels, f.s.sched, f.s.files, f.s.reactions})
	f.s.mu.Unlock()
	for _, bad := range []string{"legate-operation", "legate_operation", "lg1-"} {
		if strings.Contains(string(stored), bad) {
			t.Fatalf("Slack holds %q", bad)
		}
	}
	if !strings.Contains(string(stored), "post 1") || !strings.Contains(string(stored), "later 1") {
		t.Fatal("the writes are not in the stand-in: the scan would prove nothing")
	}
}

// A post whose answer was lost, followed by more messages than the first
// page of the history that reconciling reads, is still found: the retry
// pages on, and posts nothing.
func TestLostPostIsFoundPastTheFirstPage(t *testing.T) {
	f := newFixture(t, 1, "max_attempts: 1")
	f.s.loseFirst = true
	args := `{"channel":"#chan-0","text":"buried"}`
	if _, err := f.in.call(t, "t1", "post_message", args, "op-buried"); err == nil {
		t.Fatal("the lost answer was not lost")
	}
	f.s.mu.Lock()
	for i := range 45 { // others talk meanwhile
		m := f.s.messages["C000"][0]
		m.Text, m.User, m.Timestamp = fmt.Sprintf("chatter %d", i), "U102", fmt.Sprintf("1800000000.%06d", f.s.nextTS)
		f.s.nextTS++
		f.s.messages["C000"] = append(f.s.messages["C000"], m)
	}
	f.s.mu.Unlock()
	res, err := f.in.call(t, "t1", "post_message", args, "op-buried")
	if err != nil {
		t.Fatal(err)
	}
	if m := decode[model.Message](t, res); m.Text != "buried" || f.s.writeCount("chat.postMessage") != 1 || f.s.count("conversations.history") < 2 {
		t.Fatalf("got %+v after %d posts and %d history pages", m, f.s.writeCount("chat.postMessage"), f.s.count("conversations.history"))
	}
}
