package slack_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Slack posts the message, but its answer comes after the request's
// timeout: the connector finds the message by its marker instead of
// posting again, and the client gets it.
func TestTimedOutPostIsPostedOnce(t *testing.T) {
	for _, tool := range []string{"post_message", "reply_thread"} {
		t.Run(tool, func(t *testing.T) {
			s := newStandin(t, 1)
			in := build(t, s, "slack", "timeout: 300ms")
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

// A thousand posts, each of whose first attempt is performed by Slack and
// then loses its answer (the connection drops); every other call also
// gives up after that attempt and is called again by the client with the
// same idempotency key, as the gateway does with an approved call. Each
// client gets its post, and Slack holds exactly one message per key.
func TestNoDuplicatePostsOverAThousandLostAnswers(t *testing.T) {
	s := newStandin(t, 1)
	retrying := build(t, s, "slack", "")
	giving := build(t, s, "slack", "max_attempts: 1")
	giving.key, giving.ops = retrying.key, retrying.ops // one instance, two retry policies
	ref := retrying.channelRef(t, "t1", "chan-0")
	seen := map[string]bool{}
	s.afterPost = func(n int, w http.ResponseWriter, r *http.Request) bool {
		mk := r.FormValue("metadata")
		s.mu.Lock()
		first := !seen[mk]
		seen[mk] = true
		s.mu.Unlock()
		if first {
			hangUp(w)
		}
		return first
	}
	const writes = 1000
	for i := range writes {
		in, op := retrying, fmt.Sprintf("op-%d", i)
		if i%2 == 1 {
			in = giving
		}
		args := fmt.Sprintf(`{"channel":%q,"text":"post %d"}`, ref, i)
		res, err := in.call(t, "t1", "post_message", args, op)
		if i%2 == 1 {
			wantCode(t, err, legate.CodeTransient)
			res, err = in.call(t, "t1", "post_message", args, op)
		}
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if m := decode[model.Message](t, res); m.Text != fmt.Sprintf("post %d", i) {
			t.Fatalf("post %d: got %+v", i, m)
		}
	}
	marks := s.markers("C000")
	dups := 0
	for _, n := range marks {
		dups += n - 1
	}
	if s.postCount() != writes || len(marks) != writes || dups != 0 {
		t.Fatalf("%d posts, %d keys, %d duplicates; want %d, %d, 0", s.postCount(), len(marks), dups, writes, writes)
	}
}
