package github_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

type repoRef struct {
	FullName string `json:"full_name"`
}

type branchRef struct {
	Label string  `json:"label"`
	Ref   string  `json:"ref"`
	SHA   string  `json:"sha"`
	Repo  repoRef `json:"repo"`
}

type pull struct {
	ID                 int64      `json:"id"`
	Number             int        `json:"number"`
	Title              string     `json:"title"`
	Body               string     `json:"body"`
	State              string     `json:"state"`
	Draft              bool       `json:"draft"`
	Merged             bool       `json:"merged"`
	MergedAt           *time.Time `json:"merged_at"`
	MergeCommitSHA     *string    `json:"merge_commit_sha"`
	HTMLURL            string     `json:"html_url"`
	User               user       `json:"user"`
	Head               branchRef  `json:"head"`
	Base               branchRef  `json:"base"`
	Mergeable          *bool      `json:"mergeable"`
	Additions          int        `json:"additions"`
	Deletions          int        `json:"deletions"`
	ChangedFiles       int        `json:"changed_files"`
	RequestedReviewers []user     `json:"requested_reviewers"`
	Labels             []label    `json:"labels"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
}

type review struct {
	ID          int64     `json:"id"`
	User        *user     `json:"user"` // null for a deleted account
	Body        string    `json:"body"`
	State       string    `json:"state"`
	CommitID    string    `json:"commit_id"`
	HTMLURL     string    `json:"html_url"`
	SubmittedAt time.Time `json:"submitted_at"`
}

type reviewComment struct {
	ID        int64     `json:"id"`
	ReviewID  int64     `json:"pull_request_review_id"`
	User      user      `json:"user"`
	Body      string    `json:"body"`
	Path      string    `json:"path"`
	Line      int       `json:"line"`
	Side      string    `json:"side"`
	CommitID  string    `json:"commit_id"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt time.Time `json:"created_at"`
}

type checkRun struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	Status     string  `json:"status"`
	Conclusion *string `json:"conclusion"`
	HTMLURL    string  `json:"html_url"`
}

type commitStatus struct {
	Context     string `json:"context"`
	State       string `json:"state"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// pullState is the stand-in's pull requests: each is also an issue of the
// same number, as on GitHub.
type pullState struct {
	pulls     map[int]*pull
	reviews   map[int][]review
	rcomments map[int][]reviewComment
	checks    map[string][]checkRun
	statuses  map[string][]commitStatus
}

func (s *standin) mountPulls(mux *http.ServeMux) {
	s.pulls, s.reviews, s.rcomments = map[int]*pull{}, map[int][]review{}, map[int][]reviewComment{}
	s.checks, s.statuses = map[string][]checkRun{}, map[string][]commitStatus{}
	p := "/api/v3/repos/acme/api/pulls"
	mux.HandleFunc("GET "+p, s.wrap("pulls", s.listPulls))
	mux.HandleFunc("POST "+p, s.wrap("create_pull", s.createPull))
	mux.HandleFunc("GET "+p+"/{n}", s.wrap("pull", s.getPull))
	mux.HandleFunc("PATCH "+p+"/{n}", s.wrap("update_pull", s.editPull))
	mux.HandleFunc("GET "+p+"/{n}/files", s.wrap("pull_files", s.pullFiles))
	mux.HandleFunc("GET "+p+"/{n}/reviews", s.wrap("reviews", s.listReviews))
	mux.HandleFunc("POST "+p+"/{n}/reviews", s.wrap("submit_review", s.createReview))
	mux.HandleFunc("GET "+p+"/{n}/comments", s.wrap("review_comments", s.listReviewComments))
	mux.HandleFunc("POST "+p+"/{n}/requested_reviewers", s.wrap("request_reviewers", s.requestReviewers))
	mux.HandleFunc("PUT "+p+"/{n}/merge", s.wrap("merge_pull", s.mergePull))
	mux.HandleFunc("GET /api/v3/repos/acme/api/commits/{sha}/check-runs", s.wrap("check_runs", s.listCheckRuns))
	mux.HandleFunc("GET /api/v3/repos/acme/api/commits/{sha}/status", s.wrap("status", s.combinedStatus))
}

// addPull opens a pull request from head into base, with its issue; s.mu held.
func (s *standin) addPull(title, body, head, base string, by user) *pull {
	n := len(s.issues) + 1
	now := s.tick()
	is := &issue{ID: int64(1000 + n), Number: n, Title: title, Body: body, State: "open", User: by, CreatedAt: now, UpdatedAt: now, PR: map[string]string{"url": "x"},
		Labels: []label{}, Assignees: []user{}}
	is.HTMLURL = fmt.Sprintf("https://github.example/acme/api/pull/%d", n)
	s.issues = append(s.issues, is)
	p := &pull{ID: int64(9000 + n), Number: n, Title: title, Body: body, State: "open", HTMLURL: is.HTMLURL, User: by,
		Head:      branchRef{Label: "acme:" + head, Ref: head, SHA: fmt.Sprintf("%040x", 0xbeef0000+n), Repo: repoRef{"acme/api"}},
		Base:      branchRef{Label: "acme:" + base, Ref: base, SHA: strings.Repeat("a", 40), Repo: repoRef{"acme/api"}},
		Additions: 70, Deletions: 7, ChangedFiles: 7, RequestedReviewers: []user{}, Labels: []label{}, CreatedAt: now, UpdatedAt: now}
	s.pulls[n] = p
	return p
}

// seedPull adds a pull request with 7 reviews, 7 review comments, 205
// check runs (one failed) and 3 statuses on its head; it returns its number.
func (s *standin) seedPull() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.addPull("Add retries", "Retries the client.", "feature", "main", user{ID: 2, Login: "alice"})
	for i := range 7 {
		state := []string{"COMMENTED", "APPROVED", "CHANGES_REQUESTED"}[i%3]
		by := &user{ID: 3, Login: fmt.Sprintf("rev%d", i)}
		if i == 6 {
			by = nil // its author's account was deleted
		}
		s.reviews[p.Number] = append(s.reviews[p.Number], review{ID: int64(700 + i), User: by, Body: fmt.Sprintf("review %d", i),
			State: state, CommitID: p.Head.SHA, HTMLURL: p.HTMLURL + "#review", SubmittedAt: s.tick()})
		s.rcomments[p.Number] = append(s.rcomments[p.Number], reviewComment{ID: int64(800 + i), ReviewID: int64(700 + i), User: user{ID: 3, Login: "rev0"},
			Body: fmt.Sprintf("nit %d", i), Path: "src/f1.go", Line: i + 1, Side: "RIGHT", CommitID: p.Head.SHA, HTMLURL: p.HTMLURL + "#c", CreatedAt: s.clock})
	}
	for i := range 205 {
		ok := "success"
		c := checkRun{ID: int64(i), Name: fmt.Sprintf("check %d", i), Status: "completed", Conclusion: &ok, HTMLURL: "https://ci.example/" + strconv.Itoa(i)}
		if i == 150 {
			c.Conclusion = ptr("failure")
		}
		s.checks[p.Head.SHA] = append(s.checks[p.Head.SHA], c)
	}
	for i := range 3 {
		s.statuses[p.Head.SHA] = append(s.statuses[p.Head.SHA], commitStatus{Context: fmt.Sprintf("ci/%d", i), State: "success", Description: "ok", TargetURL: "https://ci.example"})
	}
	return p.Number
}

func ptr(s string) *string { return &s }

func (s *standin) pullOf(w http.ResponseWriter, r *http.Request) (*pull, bool) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	s.mu.Lock()
	p, ok := s.pulls[n]
	s.mu.Unlock()
	if !ok {
		refuse(w, http.StatusNotFound, "Not Found")
	}
	return p, ok
}

// simplePull is p as GitHub lists it (pull-request-simple): without the
// counts and merge state it computes for one pull request.
func simplePull(p pull) map[string]any {
	b, _ := json.Marshal(p)
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"merged", "mergeable", "additions", "deletions", "changed_files"} {
		delete(m, k)
	}
	return m
}

// pullNow is a copy of p as GitHub shows it; s.mu held.
func pullNow(p *pull) pull {
	out := *p
	out.RequestedReviewers = slices.Clone(p.RequestedReviewers)
	return out
}

func (s *standin) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	s.mu.Lock()
	var all []map[string]any
	for n := len(s.issues); n > 0; n-- {
		p, ok := s.pulls[n]
		if ok && (state == "all" || p.State == state) && (q.Get("head") == "" || q.Get("head") == p.Head.Label) && (q.Get("base") == "" || q.Get("base") == p.Base.Ref) {
			all = append(all, simplePull(pullNow(p)))
		}
	}
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

func (s *standin) createPull(w http.ResponseWriter, r *http.Request) {
	var req struct{ Title, Body, Head, Base string }
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	for _, p := range s.pulls {
		if p.State == "open" && p.Head.Ref == req.Head && p.Base.Ref == req.Base {
			s.mu.Unlock()
			refuse(w, http.StatusUnprocessableEntity, "Validation Failed: A pull request already exists for acme:"+req.Head)
			return
		}
	}
	out := pullNow(s.addPull(req.Title, req.Body, req.Head, req.Base, user{ID: 7, Login: "legate-bot"}))
	s.mu.Unlock()
	if s.wrote("create_pull", w) {
		return
	}
	answer(w, http.StatusCreated, out)
}

func (s *standin) getPull(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	if strings.Contains(r.Header.Get("Accept"), "diff") {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(s.diffOf(p.Number)))
		return
	}
	s.mu.Lock()
	out := pullNow(p)
	s.mu.Unlock()
	json.NewEncoder(w).Encode(out)
}

// diffOf is the pull request's diff: 7 files of 2,000 lines.
func (s *standin) diffOf(n int) string {
	var b strings.Builder
	for f := range 7 {
		fmt.Fprintf(&b, "diff --git a/src/f%d.go b/src/f%d.go\n--- a/src/f%d.go\n+++ b/src/f%d.go\n@@ -1,1 +1,2000 @@\n", f, f, f, f)
		for i := range 2000 {
			fmt.Fprintf(&b, "+line %d of file %d in pull %d\n", i, f, n)
		}
	}
	return b.String()
}

func (s *standin) editPull(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	var req struct {
		Title, Body, State *string
		Base               *string
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	if req.Title != nil {
		p.Title = *req.Title
	}
	if req.Body != nil {
		p.Body = *req.Body
	}
	if req.State != nil {
		p.State = *req.State
	}
	if req.Base != nil {
		p.Base.Ref, p.Base.Label = *req.Base, "acme:"+*req.Base
	}
	p.UpdatedAt = s.tick()
	out := pullNow(p)
	s.mu.Unlock()
	if s.wrote("update_pull", w) {
		return
	}
	answer(w, http.StatusOK, out)
}

func (s *standin) pullFiles(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	var all []map[string]any
	for f := range p.ChangedFiles {
		all = append(all, map[string]any{"sha": strings.Repeat("c", 40), "filename": fmt.Sprintf("src/f%d.go", f), "status": "modified", "additions": 10, "deletions": 1, "changes": 11})
	}
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

func (s *standin) listReviews(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	all := slices.Clone(s.reviews[p.Number])
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

func (s *standin) listReviewComments(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	all := slices.Clone(s.rcomments[p.Number])
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

func (s *standin) createReview(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	var req struct {
		Body, Event, CommitID string
		Comments              []struct {
			Path, Side, Body string
			Line             int
		}
	}
	json.NewDecoder(r.Body).Decode(&req)
	state := map[string]string{"COMMENT": "COMMENTED", "APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}[req.Event]
	if state == "" {
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed: event")
		return
	}
	s.mu.Lock()
	rv := review{ID: int64(70000 + len(s.reviews[p.Number])), User: &user{ID: 7, Login: "legate-bot"}, Body: req.Body, State: state, CommitID: p.Head.SHA, HTMLURL: p.HTMLURL + "#review", SubmittedAt: s.tick()}
	s.reviews[p.Number] = append(s.reviews[p.Number], rv)
	for i, c := range req.Comments {
		s.rcomments[p.Number] = append(s.rcomments[p.Number], reviewComment{ID: rv.ID*100 + int64(i), ReviewID: rv.ID, User: *rv.User, Body: c.Body, Path: c.Path, Line: c.Line, Side: c.Side, CommitID: p.Head.SHA, CreatedAt: s.clock})
	}
	s.mu.Unlock()
	if s.wrote("submit_review", w) {
		return
	}
	answer(w, http.StatusOK, rv)
}

func (s *standin) requestReviewers(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	var req struct{ Reviewers []string }
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	for _, l := range req.Reviewers {
		if !slices.ContainsFunc(p.RequestedReviewers, func(u user) bool { return u.Login == l }) {
			p.RequestedReviewers = append(p.RequestedReviewers, user{ID: 11, Login: l})
		}
	}
	p.UpdatedAt = s.tick()
	out := pullNow(p)
	s.mu.Unlock()
	if s.wrote("request_reviewers", w) {
		return
	}
	answer(w, http.StatusCreated, simplePull(out))
}

func (s *standin) mergePull(w http.ResponseWriter, r *http.Request) {
	p, ok := s.pullOf(w, r)
	if !ok {
		return
	}
	var req struct {
		SHA         string `json:"sha"`
		MergeMethod string `json:"merge_method"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	switch {
	case p.Merged || p.State != "open":
		s.mu.Unlock()
		refuse(w, http.StatusMethodNotAllowed, "Pull Request is not mergeable")
		return
	case req.SHA != "" && req.SHA != p.Head.SHA:
		s.mu.Unlock()
		refuse(w, http.StatusConflict, "Head branch was modified. Review and try the merge again.")
		return
	}
	now := s.tick()
	p.Merged, p.MergedAt, p.State, p.UpdatedAt = true, &now, "closed", now
	p.MergeCommitSHA = ptr(fmt.Sprintf("%040x", 0x3e7e0000+p.Number))
	sha := *p.MergeCommitSHA
	s.mu.Unlock()
	if s.wrote("merge_pull", w) {
		return
	}
	answer(w, http.StatusOK, map[string]any{"sha": sha, "merged": true, "message": "Pull Request successfully merged"})
}

func (s *standin) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	all := slices.Clone(s.checks[r.PathValue("sha")])
	s.mu.Unlock()
	runs := pageOf(s, w, r, all)
	json.NewEncoder(w).Encode(map[string]any{"total_count": len(all), "check_runs": runs})
}

func (s *standin) combinedStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	all := slices.Clone(s.statuses[r.PathValue("sha")])
	s.mu.Unlock()
	page := pageOf(s, w, r, all)
	json.NewEncoder(w).Encode(map[string]any{"state": "success", "sha": r.PathValue("sha"), "total_count": len(all), "statuses": page})
}
