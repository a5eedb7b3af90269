package github_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// GitHub creates the issue (or the comment), but its answer comes after
// the request's timeout: the connector finds it by its marker instead of
// creating it again, and the client gets it.
func TestTimedOutWriteIsDoneOnce(t *testing.T) {
	for _, tool := range []string{"create_issue", "comment_issue"} {
		t.Run(tool, func(t *testing.T) {
			s := newStandin(t)
			s.seed(1)
			in := build(t, s, "github", "timeout: 300ms")
			args := `{"repo":"acme/api","title":"once"}`
			if tool == "comment_issue" {
				args = `{"repo":"acme/api","number":1,"body":"once"}`
			}
			s.afterCreate = func(n int, w http.ResponseWriter, r *http.Request) bool {
				if n == 1 {
					<-r.Context().Done() // done; the answer never leaves in time
					return true
				}
				return false
			}
			res, err := in.call(t, "t1", tool, args, "op-once")
			if err != nil {
				t.Fatal(err)
			}
			if s.createCount() != 1 || !strings.Contains(res.Text, "once") && tool == "create_issue" {
				t.Fatalf("%d writes; result %q", s.createCount(), res.Text)
			}
		})
	}
}

// A thousand issues, each of whose first attempt is performed by GitHub
// and then loses its answer; every other call also gives up and is called
// again with the same idempotency key. Each client gets its issue, and the
// repository holds exactly one per key.
func TestNoDuplicateIssuesOverAThousandLostAnswers(t *testing.T) {
	s := newStandin(t)
	retrying := build(t, s, "github", "")
	giving := build(t, s, "github", "max_attempts: 1")
	giving.key, giving.ops = retrying.key, retrying.ops
	seen := map[string]bool{}
	s.afterCreate = func(n int, w http.ResponseWriter, r *http.Request) bool {
		s.mu.Lock()
		title := s.issues[len(s.issues)-1].Title
		first := !seen[title]
		seen[title] = true
		s.mu.Unlock()
		if first {
			hangUp(w)
		}
		return first
	}
	const writes = 1000
	for i := range writes {
		in := retrying
		if i%2 == 1 {
			in = giving
		}
		op, args := fmt.Sprintf("op-%d", i), fmt.Sprintf(`{"repo":"acme/api","title":"issue %d"}`, i)
		res, err := in.call(t, "t1", "create_issue", args, op)
		if i%2 == 1 {
			wantCode(t, err, legate.CodeTransient)
			res, err = in.call(t, "t1", "create_issue", args, op)
		}
		if is := decode[model.Issue](t, outcome{res, err}); is.Title != fmt.Sprintf("issue %d", i) {
			t.Fatalf("write %d: got %+v", i, is)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	titles := map[string]int{}
	for _, is := range s.issues {
		titles[is.Title]++
	}
	if len(s.issues) != writes || len(titles) != writes {
		t.Fatalf("%d issues with %d titles; want %d of each", len(s.issues), len(titles), writes)
	}
}
