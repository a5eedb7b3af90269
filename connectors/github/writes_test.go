package github_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate"
)

// writeCase is a write tool's i-th call: the arguments (after making what
// it needs in the stand-in) and a text its result must hold.
type writeCase func(s *standin, i int) (args, want string)

// openPull opens a pull request from head into main; it returns its number.
func (s *standin) openPull(head string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addPull("pull "+head, "", head, "main", user{ID: 2, Login: "alice"}).Number
}

// writeCases has a case for every write tool (TestWritesOnceOverAThousandLostAnswers
// fails for a write tool without one).
var writeCases = map[string]writeCase{
	"create_issue": func(s *standin, i int) (string, string) {
		return fmt.Sprintf(`{"repo":"acme/api","title":"issue %d","body":"text %d"}`, i, i), fmt.Sprintf(`"title":"issue %d"`, i)
	},
	"comment_issue": func(s *standin, i int) (string, string) {
		if i == 0 {
			s.seed(1)
		}
		return fmt.Sprintf(`{"issue":"acme/api#1","body":"comment %d"}`, i), fmt.Sprintf(`"text":"comment %d"`, i)
	},
	"update_issue": func(s *standin, i int) (string, string) {
		if i == 0 {
			s.seed(1)
		}
		return fmt.Sprintf(`{"issue":"acme/api#1","title":"title %d","labels":["l%d"]}`, i, i), fmt.Sprintf(`"title":"title %d"`, i)
	},
	"create_pull": func(s *standin, i int) (string, string) {
		return fmt.Sprintf(`{"repo":"acme/api","title":"pull %d","head":"p%d","base":"main","body":"body %d"}`, i, i, i), fmt.Sprintf(`"title":"pull %d"`, i)
	},
	"update_pull": func(s *standin, i int) (string, string) {
		if i == 0 {
			s.openPull("feature")
		}
		return fmt.Sprintf(`{"pull":"acme/api#1","body":"body %d"}`, i), fmt.Sprintf(`"body":"body %d"`, i)
	},
	"request_reviewers": func(s *standin, i int) (string, string) {
		if i == 0 {
			s.openPull("feature")
		}
		return fmt.Sprintf(`{"pull":"acme/api#1","reviewers":["r%d"]}`, i), fmt.Sprintf(`"r%d"`, i)
	},
	"submit_review": func(s *standin, i int) (string, string) {
		if i == 0 {
			s.openPull("feature")
		}
		return fmt.Sprintf(`{"pull":"acme/api#1","event":"COMMENT","body":"review %d"}`, i), fmt.Sprintf(`"body":"review %d"`, i)
	},
	"merge_pull": func(s *standin, i int) (string, string) {
		n := s.openPull(fmt.Sprint("m", i))
		return fmt.Sprintf(`{"pull":"acme/api#%d","method":"squash"}`, n), fmt.Sprintf(`"number":%d`, n)
	},
	"put_file": func(s *standin, i int) (string, string) {
		return fmt.Sprintf(`{"repo":"acme/api","path":"docs/%d.md","branch":"main","content":"page %d","message":"add page %d"}`, i, i, i), fmt.Sprintf(`"path":"docs/%d.md"`, i)
	},
	"create_branch": func(s *standin, i int) (string, string) {
		return fmt.Sprintf(`{"repo":"acme/api","branch":"topic-%d","from":"main"}`, i), fmt.Sprintf(`"name":"topic-%d"`, i)
	},
	"rerun_workflow_run": func(s *standin, i int) (string, string) {
		id := s.seedRun()
		return fmt.Sprintf(`{"repo":"acme/api","run_id":%d,"failed_only":%v}`, id, i%2 == 0), fmt.Sprintf(`"id":%d`, id)
	},
}

// loseFirst loses the answer of the first write of tool after each arm.
type loseFirst struct {
	mu    sync.Mutex
	armed bool
}

func (l *loseFirst) arm() { l.mu.Lock(); l.armed = true; l.mu.Unlock() }

func (l *loseFirst) lose(string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	lost := l.armed
	l.armed = false
	return lost
}

// For every write tool of the type, a thousand calls, each of whose first
// write GitHub performs and then loses the answer of. Half the calls are
// retried by the connector itself, half give up (max_attempts: 1) and are
// called again by the client with the same idempotency key on an instance
// sharing the operation record. Each call writes exactly once and its
// retry returns that write.
func TestWritesOnceOverAThousandLostAnswers(t *testing.T) {
	probe := newStandin(t)
	for _, tool := range catalog(t, build(t, probe, "github", "")) {
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
			s.lose = func(op string) bool { return op == tool.Name && l.lose(op) }
			retrying := build(t, s, "github", "toolsets: [all]")
			giving := build(t, s, "github", "toolsets: [all]\nmax_attempts: 1")
			giving.key, giving.ops = retrying.key, retrying.ops
			const calls = 1000
			for i := range calls {
				args, want := setup(s, i)
				op := fmt.Sprintf("op-%d", i)
				before := s.writeCount(tool.Name)
				l.arm()
				in := retrying
				if i%2 == 1 {
					in = giving
					_, err := in.call(t, "t1", tool.Name, args, op)
					wantCode(t, err, legate.CodeTransient)
				}
				res, err := in.call(t, "t1", tool.Name, args, op)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				b, _ := json.Marshal(res.Structured)
				if got := s.writeCount(tool.Name) - before; got != 1 || !strings.Contains(string(b), want) {
					t.Fatalf("call %d: %d writes; result %s, want %s in it", i, got, b, want)
				}
			}
		})
	}
}

// markerTexts are the texts the stand-in holds that a write may have
// written: bodies, comments, reviews, files, commit messages.
func (s *standin) markerTexts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, is := range s.issues {
		out = append(out, is.Title, is.Body)
	}
	for _, cs := range s.comments {
		for _, c := range cs {
			out = append(out, c.Body)
		}
	}
	for _, p := range s.pulls {
		out = append(out, p.Title, p.Body)
	}
	for _, rs := range s.reviews {
		for _, r := range rs {
			out = append(out, r.Body)
		}
	}
	for _, files := range s.files {
		for path, text := range files {
			out = append(out, path, text)
		}
	}
	for _, c := range s.commits {
		out = append(out, c.Message)
	}
	return out
}

// With markers off (the default), no write leaves a marker in what GitHub
// keeps, even when a lost answer makes it reconcile; with markers on, the
// text carries it, the result does not, and the lost write is found by it.
func TestMarkers(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("markers ", on), func(t *testing.T) {
			marked := 0
			for name, setup := range writeCases {
				s := newStandin(t)
				var l loseFirst
				s.lose = l.lose
				in := build(t, s, "github", fmt.Sprintf("toolsets: [all]\nmarkers: %v", on))
				for i := range 2 {
					args, want := setup(s, i)
					l.arm()
					res, err := in.call(t, "t1", name, args, fmt.Sprint(name, i))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if b, _ := json.Marshal(res.Structured); !strings.Contains(string(b), want) || strings.Contains(string(b), "legate-operation") {
						t.Fatalf("%s: result %s", name, b)
					}
					if s.writeCount(name) != i+1 {
						t.Fatalf("%s: %d writes after %d calls", name, s.writeCount(name), i+1)
					}
				}
				for _, text := range s.markerTexts() {
					if strings.Contains(text, "legate-operation") || strings.Contains(text, "lg1-") {
						marked++
					}
				}
			}
			// Markers on: 2 issues, 2 comments, 2 reviews, 2 pull
			// requests and the issues they are.
			if want := map[bool]int{false: 0, true: 10}[on]; marked != want {
				t.Fatalf("%d texts hold a marker; want %d", marked, want)
			}
		})
	}
}
