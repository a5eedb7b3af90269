package github_test

import (
	"net/http"
	"strings"
	"testing"
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
