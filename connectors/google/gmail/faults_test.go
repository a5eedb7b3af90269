package gmail_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// Every tool's case passes when the first request to each endpoint is
// refused, with a 5xx, a 429 with Retry-After or a 403 rate limit: the
// kit retries each, and the case's checks hold.
func TestEveryToolThroughFaults(t *testing.T) {
	faults := map[string]func(s *standin, w http.ResponseWriter){
		"503": func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusServiceUnavailable, "UNAVAILABLE", "backendError", "The service is currently unavailable.")
		},
		"500": func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusInternalServerError, "INTERNAL", "backendError", "Internal error encountered.")
		},
		"429 Retry-After": func(s *standin, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			s.fail(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "Too many requests.")
		},
		"403 userRateLimitExceeded": func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusForbidden, "PERMISSION_DENIED", "userRateLimitExceeded", "User-rate limit exceeded.")
		},
	}
	for fault, answer := range faults {
		for name, run := range toolCases {
			t.Run(fault+"/"+name, func(t *testing.T) {
				s := newStandin(t)
				s.fault = func(op string, n int, w http.ResponseWriter) bool {
					if n == 1 {
						answer(s, w)
						return true
					}
					return false
				}
				run(t, s, newEnv(t, s, 4))
			})
		}
	}
}

// A refusal that lasts is its class once the attempts are spent; a 429
// keeps its Retry-After for the client; a refused token is AUTH_EXPIRED.
func TestFailuresMapToTheirClass(t *testing.T) {
	for name, c := range map[string]struct {
		answer func(s *standin, w http.ResponseWriter)
		code   legate.Code
	}{
		"429": {func(s *standin, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "120")
			s.fail(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "rateLimitExceeded", "Too many requests.")
		}, legate.CodeRateLimited},
		"503": {func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusServiceUnavailable, "UNAVAILABLE", "backendError", "unavailable")
		}, legate.CodeTransient},
		"403": {func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusForbidden, "PERMISSION_DENIED", "insufficientPermissions", "Request had insufficient authentication scopes.")
		}, legate.CodePermissionDenied},
		"400": {func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusBadRequest, "INVALID_ARGUMENT", "invalidArgument", "Invalid query.")
		}, legate.CodeInvalidArgument},
		"401": {func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusUnauthorized, "UNAUTHENTICATED", "authError", "Invalid Credentials")
		}, legate.CodeAuthExpired},
		"not JSON": {func(s *standin, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{not json"))
		}, legate.CodeAdapterMapping},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			s.fault = func(string, int, http.ResponseWriter) bool { return false }
			s.fault = func(_ string, _ int, w http.ResponseWriter) bool { c.answer(s, w); return true }
			_, err := newEnv(t, s, 2).call(t, "gmail_search_messages", `{}`, "")
			le := wantCode(t, err, c.code)
			if c.code == legate.CodeRateLimited && le.RetryAfter.Seconds() != 120 {
				t.Errorf("retry after %v", le.RetryAfter)
			}
			if strings.Contains(le.Error(), token) {
				t.Errorf("the token in %q", le.Error())
			}
		})
	}
}

// loseFirst loses the answer of the first write after each arm.
type loseFirst struct {
	mu    sync.Mutex
	armed bool
}

func (l *loseFirst) arm() { l.mu.Lock(); l.armed = true; l.mu.Unlock() }

func (l *loseFirst) lose() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	lost := l.armed
	l.armed = false
	return lost
}

// writeCase is a write tool's i-th call: its arguments (after making what
// it needs in the stand-in), the stand-in's op that performs it, and a
// text its result must hold.
type writeCase func(s *standin, i int) (args, op, want string)

var writeCases = map[string]writeCase{
	"gmail_send_message": func(s *standin, i int) (string, string, string) {
		return fmt.Sprintf(`{"to":["ana@example.com"],"subject":"note %d","text":"text %d"}`, i, i), "send", fmt.Sprintf(`"subject":"note %d"`, i)
	},
	"gmail_create_draft": func(s *standin, i int) (string, string, string) {
		return fmt.Sprintf(`{"to":["ana@example.com"],"subject":"draft %d","text":"text %d","html":"<p>text %d</p>"}`, i, i, i), "drafts", fmt.Sprintf(`"subject":"draft %d"`, i)
	},
	"gmail_reply": func(s *standin, i int) (string, string, string) {
		if i == 0 {
			s.seed(1)
		}
		return fmt.Sprintf(`{"message_id":%q,"text":"answer %d"}`, s.order[0], i), "send", fmt.Sprintf(`"text":"answer %d"`, i)
	},
	"gmail_modify_labels": func(s *standin, i int) (string, string, string) {
		m := s.seed(1)[0]
		return fmt.Sprintf(`{"message_id":%q,"add":["STARRED","Travel"],"remove":["UNREAD"]}`, m.id), "modify", fmt.Sprintf(`"external_id":%q`, m.id)
	},
}

// For every write tool, a thousand calls, each of whose first write Gmail
// performs and then loses the answer of (503). Half the calls are retried
// by the kit itself, half give up (one attempt) and are called again by
// the client with the same operation id on tools sharing the operation
// record. Each call writes exactly once and its retry returns that write.
func TestWritesOnceOverAThousandLostAnswers(t *testing.T) {
	for _, tool := range newEnv(t, newStandin(t), 1).tools {
		if tool.Class == legate.ClassRead {
			continue
		}
		t.Run(tool.Name, func(t *testing.T) {
			t.Parallel()
			setup := writeCases[tool.Name]
			if setup == nil {
				t.Fatalf("write tool %s has no case in writeCases", tool.Name)
			}
			s := newStandin(t)
			var l loseFirst
			retrying, giving := newEnv(t, s, 3), newEnv(t, s, 1)
			giving.ops = retrying.ops
			const calls = 1000
			for i := range calls {
				args, op, want := setup(s, i)
				s.lose = func(got string) bool { return got == op && l.lose() }
				before := s.writeCount(op)
				l.arm()
				e := retrying
				id := fmt.Sprintf("op-%d", i)
				if i%2 == 1 {
					e = giving
					_, err := e.call(t, tool.Name, args, id)
					wantCode(t, err, legate.CodeTransient)
				}
				res, err := e.call(t, tool.Name, args, id)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				b := fmt.Sprintf("%s", mustJSON(res.Structured))
				if got := s.writeCount(op) - before; got != 1 || !strings.Contains(b, want) {
					t.Fatalf("call %d: %d writes; result %s, want %s in it", i, got, b, want)
				}
			}
			s.noMarkers(t)
		})
	}
}

// noMarkers fails when anything the stand-in stores carries a mark of
// Legate's: an operation id or marker, the word legate.
func (s *standin) noMarkers(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		all := m.text + m.html + strings.Join(m.labels, " ")
		for _, h := range m.headers {
			all += h[0] + ": " + h[1] + "\n"
		}
		for _, mark := range []string{"lg1-", "legate", "op-"} {
			if strings.Contains(strings.ToLower(all), mark) {
				t.Fatalf("message %s holds %q: %s", m.id, mark, all)
			}
		}
	}
}

// A write whose answer was lost and whose retry finds nothing written
// (the write did not happen after all) is written by the retry.
func TestLostWriteThatDidNotHappenIsWritten(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	s.fault = func(op string, n int, w http.ResponseWriter) bool {
		if op == "messages/send" && n == 1 {
			s.fail(w, http.StatusBadGateway, "UNAVAILABLE", "backendError", "bad gateway")
			return true
		}
		return false
	}
	m := do[model.Message](t, e, "gmail_send_message", `{"to":["ana@example.com"],"subject":"once","text":"hello"}`, "op-1")
	if s.writeCount("send") != 1 || s.counts["messages"] != 1 || m.Subject != "once" {
		t.Fatalf("%d sends, %d searches of Sent", s.writeCount("send"), s.counts["messages"])
	}
}

// The connector's MapError, when given, maps Google's errors instead of
// the package's own mapping by status.
func TestTheConnectorsMapErrorIsUsed(t *testing.T) {
	s := newStandin(t)
	s.fault = func(_ string, _ int, w http.ResponseWriter) bool {
		s.fail(w, http.StatusForbidden, "PERMISSION_DENIED", "dailyLimitExceeded", "Daily Limit Exceeded")
		return true
	}
	e := newEnv(t, s, 2)
	_, err := e.call(t, "gmail_list_labels", `{}`, "")
	wantCode(t, err, legate.CodePermissionDenied)
	mapped := newEnvMapped(t, s, func(error) error {
		return &legate.Error{Code: legate.CodeRateLimited, Message: "google: daily limit"}
	})
	_, err = mapped.call(t, "gmail_list_labels", `{}`, "")
	if le := wantCode(t, err, legate.CodeRateLimited); le.Message != "google: daily limit" {
		t.Fatalf("message %q", le.Message)
	}
}
