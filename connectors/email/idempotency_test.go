package email_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// loseFirst loses the answer of the first change after it is armed.
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

// writeCase sets up call i of a write tool: its arguments, what its
// result holds, and the count of the effect it must have once.
type writeCase struct {
	setup  func(t *testing.T, s *standin, in *instance, i int) (args, want string)
	effect func(s *standin) int
	// after, when set, clears what the call left, so that the next one
	// does not search through a thousand.
	after func(t *testing.T, s *standin)
}

var writeCases = map[string]writeCase{
	"mark": {
		setup: func(t *testing.T, s *standin, in *instance, i int) (string, string) {
			if i == 0 {
				s.seed(t, "INBOX", plain("bob@example.com", "flags", "x", 1), day)
			}
			// Each call flips the flag, so each must store once.
			return fmt.Sprintf(`{"message":%q,"read":%v}`, refOf(t, in, "INBOX", "flags"), i%2 == 0), `"action":"marked"`
		},
		effect: func(s *standin) int { return s.writeCount("store") },
	},
	"move":    relocation(`,"folder":"Archive"`, `"folder":"Archive"`),
	"archive": relocation("", `"folder":"Archive"`),
	"delete":  relocation("", `"action":"moved to trash"`),
	"draft": {
		setup: func(t *testing.T, s *standin, in *instance, i int) (string, string) {
			return fmt.Sprintf(`{"to":["bob@example.com"],"subject":"draft %d","text":"x"}`, i), fmt.Sprintf(`"subject":"draft %d"`, i)
		},
		effect: func(s *standin) int { return s.writeCount("append") },
		after: func(t *testing.T, s *standin) {
			if err := s.user.Delete("Drafts"); err != nil {
				t.Fatal(err)
			}
			if err := s.user.Create("Drafts", nil); err != nil {
				t.Fatal(err)
			}
		},
	},
	"send": {
		setup: func(t *testing.T, s *standin, in *instance, i int) (string, string) {
			return fmt.Sprintf(`{"to":["bob@example.com"],"subject":"send %d","text":"x"}`, i), fmt.Sprintf(`"subject":"send %d"`, i)
		},
		effect: func(s *standin) int { return len(s.delivered()) },
	},
	"reply": {
		setup: func(t *testing.T, s *standin, in *instance, i int) (string, string) {
			if i == 0 {
				s.seed(t, "INBOX", plain("bob@example.com", "question", "x", 1), day)
			}
			return fmt.Sprintf(`{"message":%q,"text":"answer %d"}`, refOf(t, in, "INBOX", "question"), i), fmt.Sprintf(`"text":"answer %d"`, i)
		},
		effect: func(s *standin) int { return len(s.delivered()) },
	},
}

// relocation is the case of a tool that moves a message out of INBOX.
func relocation(args, want string) writeCase {
	return writeCase{
		setup: func(t *testing.T, s *standin, in *instance, i int) (string, string) {
			subject := fmt.Sprintf("message %d", i)
			s.seed(t, "INBOX", plain("bob@example.com", subject, "x", i), day)
			return fmt.Sprintf(`{"message":%q%s}`, refOf(t, in, "INBOX", subject), args), want
		},
		effect: func(s *standin) int { return s.writeCount("move") },
	}
}

// For every write tool of the type, a thousand calls, each of whose first
// change the server makes and then loses the answer of (IMAP: the
// connection drops after the command; SMTP: after the message is taken,
// before its 250). Half the calls are retried by the connector itself,
// half give up (max_attempts: 1) and are called again by the client with
// the same idempotency key on an instance sharing the operation record.
// Each call has its effect exactly once and its retry returns it.
func TestWritesOnceOverAThousandLostAnswers(t *testing.T) {
	probe := build(t, newStandin(t), "probe", "toolsets: [all]")
	for _, tool := range probe.c.(connectors.ToolCatalog).ToolCatalog() {
		if tool.Class == legate.ClassRead {
			continue
		}
		t.Run(tool.Name, func(t *testing.T) {
			t.Parallel()
			wc, ok := writeCases[tool.Name]
			if !ok {
				t.Fatalf("write tool %s has no case in writeCases", tool.Name)
			}
			s := newStandin(t)
			var l loseFirst
			s.lose = func(string) bool { return l.lose() }
			s.onData = func(int, delivery) error {
				if l.lose() {
					return errDrop
				}
				return nil
			}
			retrying := build(t, s, "email", "toolsets: [all]")
			giving := build(t, s, "email", "toolsets: [all]\nmax_attempts: 1")
			giving.key, giving.ops = retrying.key, retrying.ops
			const calls = 1000
			for i := range calls {
				args, want := wc.setup(t, s, retrying, i)
				op := fmt.Sprintf("op-%d", i)
				before := wc.effect(s)
				l.arm()
				in := retrying
				if i%2 == 1 {
					in = giving
					// Draft runs its step again at once on a new connection
					// when a pooled one broke, and finds the draft there.
					if _, err := in.call(t, "t1", tool.Name, args, op); err != nil || tool.Name != "draft" {
						wantCode(t, err, legate.CodeTransient)
					}
				}
				res, err := in.call(t, "t1", tool.Name, args, op)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				b, _ := json.Marshal(res.Structured)
				if got := wc.effect(s) - before; got != 1 || !strings.Contains(string(b), want) {
					t.Fatalf("call %d: %d effects; result %s, want %s in it", i, got, b, want)
				}
				if wc.after != nil {
					wc.after(t, s)
				}
			}
		})
	}
}
