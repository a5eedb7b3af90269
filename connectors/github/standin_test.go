package github_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

const token = "ghp_canary7f1c9a2b5e0d"

// The OAuth app the stand-in's OAuth endpoints know.
const (
	standinClientID     = "Iv1.standin"
	standinClientSecret = "standin-secret-5e0d"
)

type issue struct {
	ID          int64      `json:"id"`
	Number      int        `json:"number"`
	Title       string     `json:"title"`
	Body        string     `json:"body"`
	State       string     `json:"state"`
	HTMLURL     string     `json:"html_url"`
	User        user       `json:"user"`
	Labels      []label    `json:"labels"`
	Comments    int        `json:"comments"`
	Assignees   []user     `json:"assignees"`
	StateReason string     `json:"state_reason,omitempty"`
	Milestone   *milestone `json:"milestone"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	PR          any        `json:"pull_request,omitempty"`
}

type milestone struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
}

type user struct {
	ID    int64  `json:"id"`
	Login string `json:"login"`
}

type label struct {
	Name string `json:"name"`
}

type comment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	HTMLURL   string    `json:"html_url"`
	User      user      `json:"user"`
	CreatedAt time.Time `json:"created_at"`
}

// standin is a GitHub REST API on httptest, mounted at /api/v3/ as GitHub
// Enterprise serves it, for the repository acme/api.
//
// Its OAuth endpoints (oauth, under /login/oauth/: authorize, token,
// revoke) issue tokens per test user; an API call is answered with token
// or a valid token the OAuth endpoints issued, and oauth records the
// token of each call, in order.
type standin struct {
	srv   *httptest.Server
	oauth *oauthtest.Provider

	mu       sync.Mutex
	issues   []*issue // by number - 1
	comments map[int][]comment
	creates  int // issues and comments created
	calls    map[string]int
	scopes   string
	clock    time.Time
	// fault may answer a request first: method is e.g. "list", "create".
	fault func(op string, n int, w http.ResponseWriter, r *http.Request) bool
	// afterCreate may answer in place of a success, after the write.
	afterCreate func(n int, w http.ResponseWriter, r *http.Request) bool
	// lose, when it returns true for a write's op, loses the write's
	// answer: the stand-in hangs up after writing.
	lose   func(op string) bool
	writes map[string]int // writes performed, by op

	// record, when set, gets every API answer: its op, status, content
	// type and body.
	record func(op string, status int, contentType string, body []byte)

	labels []string
	pullState
	repoState
	actionState
}

func newStandin(t *testing.T) *standin {
	t.Helper()
	s := &standin{comments: map[int][]comment{}, calls: map[string]int{}, scopes: "repo, read:org", writes: map[string]int{},
		oauth: oauthtest.New(standinClientID, standinClientSecret, "gho_")}
	for i := range 7 {
		s.labels = append(s.labels, fmt.Sprintf("label-%d", i))
	}
	mux := http.NewServeMux()
	s.oauth.Mount(func(p string, h http.HandlerFunc) { mux.HandleFunc(p, h) }, "/login/oauth")
	mux.HandleFunc("GET /api/v3/user", s.wrap("user", s.user))
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues", s.wrap("list", s.list))
	mux.HandleFunc("POST /api/v3/repos/acme/api/issues", s.wrap("create", s.create))
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/{n}", s.wrap("get", s.get))
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/{n}/comments", s.wrap("comments", s.listComments))
	mux.HandleFunc("POST /api/v3/repos/acme/api/issues/{n}/comments", s.wrap("comment", s.comment))
	mux.HandleFunc("PATCH /api/v3/repos/acme/api/issues/{n}", s.wrap("edit_issue", s.editIssue))
	mux.HandleFunc("GET /api/v3/repos/acme/api/labels", s.wrap("labels", s.listLabels))
	s.mountPulls(mux)
	s.mountRepos(mux)
	s.mountSearch(mux)
	s.mountActions(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message":"Not Found"}`))
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *standin) wrap(op string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[op]++
		n := s.calls[op]
		fault := s.fault
		s.mu.Unlock()
		if fault != nil && fault(op, n, w, r) {
			return
		}
		if _, issued := s.oauth.Bearer(r); !issued && r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"Bad credentials"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		s.mu.Lock()
		record := s.record
		s.mu.Unlock()
		if record == nil {
			h(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h(rec, r)
		record(op, rec.status, w.Header().Get("Content-Type"), rec.body.Bytes())
	}
}

// recorder keeps a copy of what a handler answers.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets hangUp reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *standin) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *standin) user(w http.ResponseWriter, r *http.Request) {
	if s.scopes != "" { // a fine-grained or installation token has none
		w.Header().Set("X-OAuth-Scopes", s.scopes)
	}
	json.NewEncoder(w).Encode(user{ID: 7, Login: "legate-bot"})
}

// tick is the stand-in's clock: now, in whole seconds as GitHub gives
// them, and every change at least a second after the one before.
func (s *standin) tick() time.Time {
	next := s.clock.Add(time.Second)
	if now := time.Now().UTC().Truncate(time.Second); now.After(next) {
		next = now
	}
	s.clock = next
	return s.clock
}

// seed adds n issues (every third a pull request) and returns the numbers.
func (s *standin) seed(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		is := &issue{Number: len(s.issues) + 1, Title: fmt.Sprintf("issue %d", i), State: "open", User: user{ID: 2, Login: "alice"}, Labels: []label{}, Assignees: []user{}}
		is.ID, is.CreatedAt, is.UpdatedAt = int64(1000+is.Number), s.tick(), s.clock
		is.HTMLURL = fmt.Sprintf("https://github.example/acme/api/issues/%d", is.Number)
		if i%3 == 2 {
			is.PR = map[string]string{"url": "x"}
		}
		s.issues = append(s.issues, is)
	}
}

func (s *standin) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	since, _ := time.Parse(time.RFC3339, q.Get("since"))
	s.mu.Lock()
	var all []issue
	for _, is := range slices.Backward(s.issues) { // newest first
		if (state == "all" || is.State == state) && !is.UpdatedAt.Before(since) && (q.Get("creator") == "" || q.Get("creator") == is.User.Login) {
			all = append(all, *is)
		}
	}
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

// pageOf is the page of all that r asks (page, per_page), with GitHub's
// Link header to the next page when there is one.
func pageOf[T any](s *standin, w http.ResponseWriter, r *http.Request, all []T) []T {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	start := min((page-1)*per, len(all))
	end := min(start+per, len(all))
	if end < len(all) {
		link := func(p int) string {
			u := *r.URL
			q := u.Query()
			q.Set("page", strconv.Itoa(p))
			u.RawQuery = q.Encode()
			return s.srv.URL + u.RequestURI()
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, link(page+1), link((len(all)+per-1)/per)))
	}
	out := all[start:end]
	if out == nil {
		out = []T{}
	}
	return out
}

// wrote counts a write of op and reports whether its answer is lost,
// the connection hung up; s.mu is not held.
func (s *standin) wrote(op string, w http.ResponseWriter) bool {
	s.mu.Lock()
	s.writes[op]++
	lose := s.lose
	s.mu.Unlock()
	if lose != nil && lose(op) {
		hangUp(w)
		return true
	}
	return false
}

// writeCount is how many writes of op the stand-in performed.
func (s *standin) writeCount(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[op]
}

// answer sends v as JSON with status.
func answer(w http.ResponseWriter, status int, v any) {
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// refuse answers a GitHub error.
func refuse(w http.ResponseWriter, status int, msg string) {
	answer(w, status, map[string]string{"message": msg})
}

func (s *standin) number(w http.ResponseWriter, r *http.Request) (*issue, bool) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.issues) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message":"Not Found"}`))
		return nil, false
	}
	return s.issues[n-1], true
}

func (s *standin) get(w http.ResponseWriter, r *http.Request) {
	if is, ok := s.number(w, r); ok {
		s.mu.Lock()
		json.NewEncoder(w).Encode(is)
		s.mu.Unlock()
	}
}

func (s *standin) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	is := &issue{Number: len(s.issues) + 1, Title: req.Title, Body: req.Body, State: "open", User: user{ID: 7, Login: "legate-bot"}, Labels: []label{}, Assignees: []user{}}
	is.ID, is.CreatedAt, is.UpdatedAt = int64(1000+is.Number), s.tick(), s.clock
	is.HTMLURL = fmt.Sprintf("https://github.example/acme/api/issues/%d", is.Number)
	for _, l := range req.Labels {
		is.Labels = append(is.Labels, label{l})
	}
	s.issues = append(s.issues, is)
	s.creates++
	n, after, out := s.creates, s.afterCreate, *is
	s.mu.Unlock()
	if after != nil && after(n, w, r) || s.wrote("create_issue", w) {
		return
	}
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(out)
}

func (s *standin) listComments(w http.ResponseWriter, r *http.Request) {
	is, ok := s.number(w, r)
	if !ok {
		return
	}
	since, _ := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
	s.mu.Lock()
	var out []comment
	for _, c := range s.comments[is.Number] {
		if !c.CreatedAt.Before(since) {
			out = append(out, c)
		}
	}
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, out))
}

func (s *standin) comment(w http.ResponseWriter, r *http.Request) {
	is, ok := s.number(w, r)
	if !ok {
		return
	}
	var req struct {
		Body string `json:"body"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	c := comment{ID: int64(5000 + s.creates), Body: req.Body, User: user{ID: 7, Login: "legate-bot"}, CreatedAt: s.tick()}
	c.HTMLURL = fmt.Sprintf("%s#issuecomment-%d", is.HTMLURL, c.ID)
	s.comments[is.Number] = append(s.comments[is.Number], c)
	is.Comments++
	is.UpdatedAt = s.clock
	s.creates++
	n, after := s.creates, s.afterCreate
	s.mu.Unlock()
	if after != nil && after(n, w, r) || s.wrote("comment_issue", w) {
		return
	}
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(c)
}

func (s *standin) createCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates
}

// hangUp answers nothing and closes the connection: the answer is lost.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func (s *standin) editIssue(w http.ResponseWriter, r *http.Request) {
	is, ok := s.number(w, r)
	if !ok {
		return
	}
	var req struct {
		Title       *string         `json:"title"`
		Body        *string         `json:"body"`
		State       *string         `json:"state"`
		StateReason *string         `json:"state_reason"`
		Labels      *[]string       `json:"labels"`
		Assignees   *[]string       `json:"assignees"`
		Milestone   json.RawMessage `json:"milestone"` // null removes it
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	if req.Title != nil {
		is.Title = *req.Title
	}
	if req.Body != nil {
		is.Body = *req.Body
	}
	if req.State != nil {
		is.State = *req.State
	}
	if req.StateReason != nil {
		is.StateReason = *req.StateReason
	}
	if req.Labels != nil {
		is.Labels = []label{}
		for _, l := range *req.Labels {
			is.Labels = append(is.Labels, label{l})
		}
	}
	if req.Assignees != nil {
		is.Assignees = []user{}
		for _, a := range *req.Assignees {
			is.Assignees = append(is.Assignees, user{ID: 9, Login: a})
		}
	}
	var m *int
	if json.Unmarshal(req.Milestone, &m) == nil {
		is.Milestone = nil
		if m != nil {
			is.Milestone = &milestone{Number: *m, Title: fmt.Sprintf("M%d", *m)}
		}
	}
	is.UpdatedAt = s.tick()
	out := *is
	s.mu.Unlock()
	if s.wrote("update_issue", w) {
		return
	}
	answer(w, http.StatusOK, out)
}

func (s *standin) listLabels(w http.ResponseWriter, r *http.Request) {
	var all []map[string]string
	for _, l := range s.labels {
		all = append(all, map[string]string{"name": l, "color": "ededed", "description": "about " + l})
	}
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}
