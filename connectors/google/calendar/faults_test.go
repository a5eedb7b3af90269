package calendar_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/google/calendar"
)

// Every tool's case passes when the first request to each endpoint is
// refused, with a 5xx, a 429 with Retry-After or a 403 rate limit: the
// kit retries each, and the case's checks hold.
func TestEveryToolThroughFaults(t *testing.T) {
	faults := map[string]func(s *standin, w http.ResponseWriter){
		"503": func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusServiceUnavailable, "backendError", "Backend Error")
		},
		"500": func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusInternalServerError, "backendError", "Backend Error")
		},
		"429 Retry-After": func(s *standin, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			s.fail(w, http.StatusTooManyRequests, "rateLimitExceeded", "Rate Limit Exceeded")
		},
		"403 rateLimitExceeded": func(s *standin, w http.ResponseWriter) {
			s.fail(w, http.StatusForbidden, "rateLimitExceeded", "Rate Limit Exceeded")
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
// keeps its Retry-After; the token shows in no error.
func TestFailuresMapToTheirClass(t *testing.T) {
	for name, c := range map[string]struct {
		status int
		reason string
		code   legate.Code
	}{
		"429": {http.StatusTooManyRequests, "rateLimitExceeded", legate.CodeRateLimited},
		"503": {http.StatusServiceUnavailable, "backendError", legate.CodeTransient},
		"403": {http.StatusForbidden, "forbidden", legate.CodePermissionDenied},
		"400": {http.StatusBadRequest, "invalid", legate.CodeInvalidArgument},
		"401": {http.StatusUnauthorized, "authError", legate.CodeAuthExpired},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			s.fault = func(_ string, _ int, w http.ResponseWriter) bool {
				w.Header().Set("Retry-After", "120")
				s.fail(w, c.status, c.reason, "refused")
				return true
			}
			_, err := newEnv(t, s, 2).call(t, "calendar_list_calendars", `{}`, "")
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
	"calendar_create_event": func(s *standin, i int) (string, string, string) {
		return fmt.Sprintf(`{"summary":"meeting %d","start":"2026-12-01T10:00:00Z","end":"2026-12-01T11:00:00Z","attendees":["bo@example.com"]}`, i), "insert", fmt.Sprintf(`"summary":"meeting %d"`, i)
	},
	"calendar_update_event": func(s *standin, i int) (string, string, string) {
		if i == 0 {
			s.seed(1)
		}
		return fmt.Sprintf(`{"event_id":"ev00001","summary":"title %d","location":"room %d"}`, i, i), "patch", fmt.Sprintf(`"summary":"title %d"`, i)
	},
	"calendar_delete_event": func(s *standin, i int) (string, string, string) {
		ev := s.add("primary", &sevent{Summary: "gone", Start: &edt{Date: "2026-12-01"}, End: &edt{Date: "2026-12-02"}})
		return fmt.Sprintf(`{"event_id":%q}`, ev.ID), "delete", fmt.Sprintf(`"external_id":%q`, ev.ID)
	},
	"calendar_respond_to_event": func(s *standin, i int) (string, string, string) {
		inv := s.invite()
		return fmt.Sprintf(`{"event_id":%q,"response":"declined"}`, inv.ID), "patch", fmt.Sprintf(`"external_id":%q`, inv.ID)
	},
}

// For every write tool, a thousand calls, each of whose first write
// Calendar performs and then loses the answer of (503). Half the calls
// are retried by the kit itself, half give up (one attempt) and are called
// again by the client with the same operation id on tools sharing the
// operation record. Each call writes exactly once and its retry returns
// that write; no event holds a mark of Legate's.
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
				b, _ := json.Marshal(res.Structured)
				if got := s.writeCount(op) - before; got != 1 || !strings.Contains(string(b), want) {
					t.Fatalf("call %d: %d writes; result %s, want %s in it", i, got, b, want)
				}
			}
			s.noMarkers(t)
		})
	}
}

// Two calls creating the same event with different operation ids make two
// events; the same operation id on another instance's kit (another
// marker) makes another too: the id derives from the instance and the
// operation.
func TestEventIDsFollowTheOperation(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	args := `{"summary":"twice","start":"2026-12-01","end":"2026-12-02"}`
	a := do[calendar.Event](t, e, "calendar_create_event", args, "op-a")
	b := do[calendar.Event](t, e, "calendar_create_event", args, "op-b")
	again := do[calendar.Event](t, e, "calendar_create_event", args, "op-a")
	if a.ExternalID == b.ExternalID || again.ExternalID != a.ExternalID || s.writeCount("insert") != 2 {
		t.Fatalf("ids %s %s %s; %d inserts", a.ExternalID, b.ExternalID, again.ExternalID, s.writeCount("insert"))
	}
	// The operation record forgotten (another gateway, the record expired):
	// the 409 of the event's id still finds the event.
	fresh := newEnv(t, s, 3)
	fresh.key = e.key
	if c := do[calendar.Event](t, fresh, "calendar_create_event", args, "op-a"); c.ExternalID != a.ExternalID || s.writeCount("insert") != 2 {
		t.Fatalf("id %s; %d inserts", c.ExternalID, s.writeCount("insert"))
	}
}

// The connector's MapError, when given, maps Google's errors instead of
// the package's own mapping by status.
func TestTheConnectorsMapErrorIsUsed(t *testing.T) {
	s := newStandin(t)
	s.fault = func(_ string, _ int, w http.ResponseWriter) bool {
		s.fail(w, http.StatusForbidden, "quotaExceeded", "Calendar usage limits exceeded.")
		return true
	}
	_, err := newEnv(t, s, 2).call(t, "calendar_list_calendars", `{}`, "")
	wantCode(t, err, legate.CodePermissionDenied)
	mapped := newEnvMapped(t, s, func(error) error {
		return &legate.Error{Code: legate.CodeRateLimited, Message: "google: quota"}
	})
	_, err = mapped.call(t, "calendar_list_calendars", `{}`, "")
	if le := wantCode(t, err, legate.CodeRateLimited); le.Message != "google: quota" {
		t.Fatalf("message %q", le.Message)
	}
}
