package github_test

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

type gitCommit struct {
	SHA, Message, Author string
	Date                 time.Time
	Branch               string
	Paths                []string
}

type release struct {
	ID          int64     `json:"id"`
	TagName     string    `json:"tag_name"`
	Name        string    `json:"name"`
	Body        string    `json:"body"`
	Draft       bool      `json:"draft"`
	Prerelease  bool      `json:"prerelease"`
	Author      user      `json:"author"`
	HTMLURL     string    `json:"html_url"`
	CreatedAt   time.Time `json:"created_at"`
	PublishedAt time.Time `json:"published_at"`
	Assets      []any     `json:"assets"`
}

// repoState is acme/api's git side: files by branch, branch heads,
// commits (oldest first) and releases.
type repoState struct {
	files    map[string]map[string]string
	heads    map[string]string
	commits  []*gitCommit
	releases []release
}

// bigFile is src/app.go's size: more than get_file returns at once.
const bigFile = 150_000

func (s *standin) mountRepos(mux *http.ServeMux) {
	s.files, s.heads = map[string]map[string]string{"main": {}}, map[string]string{}
	main := s.files["main"]
	main["README.md"] = "# api\n"
	main["src/app.go"] = strings.Repeat("package app // a long line of Go\n", bigFile/33+1)
	main["logo.png"] = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	for i := range 7 {
		main[fmt.Sprintf("src/f%d.go", i)] = fmt.Sprintf("package src\n\nconst timeout%d = 5\n", i)
	}
	for i, p := range slices.Sorted(maps.Keys(main)) {
		s.commit("main", fmt.Sprintf("add %s\n\nstep %d", p, i), "alice", p)
	}
	for _, b := range []string{"feature", "b1", "b2", "b3", "b4", "b5"} {
		s.files[b], s.heads[b] = maps.Clone(main), s.heads["main"]
	}
	for i := range 7 {
		s.releases = append(s.releases, release{ID: int64(600 + i), TagName: fmt.Sprintf("v1.%d.0", i), Name: fmt.Sprintf("1.%d", i), Body: "notes " + fmt.Sprint(i),
			Prerelease: i == 6, Author: user{ID: 2, Login: "alice"}, HTMLURL: "https://github.example/acme/api/releases/" + fmt.Sprint(i),
			CreatedAt: s.tick(), PublishedAt: s.clock, Assets: []any{}})
	}
	slices.Reverse(s.releases) // newest first
	r := "/api/v3/repos/acme/api"
	mux.HandleFunc("GET "+r, s.wrap("repo", s.getRepo))
	mux.HandleFunc("GET "+r+"/contents/{path...}", s.wrap("contents", s.getContents))
	mux.HandleFunc("PUT "+r+"/contents/{path...}", s.wrap("put_file", s.putContents))
	mux.HandleFunc("GET "+r+"/commits", s.wrap("commits", s.listCommits))
	mux.HandleFunc("GET "+r+"/commits/{sha}", s.wrap("commit", s.getCommit))
	mux.HandleFunc("GET "+r+"/branches", s.wrap("branches", s.listBranches))
	mux.HandleFunc("GET "+r+"/git/ref/heads/{branch...}", s.wrap("ref", s.getRef))
	mux.HandleFunc("POST "+r+"/git/refs", s.wrap("create_branch", s.createRef))
	mux.HandleFunc("GET "+r+"/releases", s.wrap("releases", s.listReleases))
	mux.HandleFunc("GET "+r+"/releases/latest", s.wrap("latest", s.latestRelease))
}

// commit records a commit on branch touching paths; s.mu held or not yet shared.
func (s *standin) commit(branch, msg, author string, paths ...string) *gitCommit {
	c := &gitCommit{SHA: fmt.Sprintf("%040x", 0xc0000000+len(s.commits)), Message: msg, Author: author, Date: s.tick(), Branch: branch, Paths: paths}
	s.commits = append(s.commits, c)
	s.heads[branch] = c.SHA
	return c
}

func blobSHA(text string) string {
	sum := sha1.Sum([]byte(text))
	return hex.EncodeToString(sum[:])
}

func (s *standin) getRepo(w http.ResponseWriter, r *http.Request) {
	json.NewEncoder(w).Encode(map[string]any{"id": 1, "full_name": "acme/api", "name": "api", "default_branch": "main", "private": true, "html_url": "https://github.example/acme/api"})
}

func (s *standin) getContents(w http.ResponseWriter, r *http.Request) {
	ref, path := r.URL.Query().Get("ref"), strings.Trim(r.PathValue("path"), "/")
	if ref == "" {
		ref = "main"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	files, ok := s.files[ref]
	if !ok {
		refuse(w, http.StatusNotFound, "No commit found for the ref "+ref)
		return
	}
	if text, ok := files[path]; ok {
		json.NewEncoder(w).Encode(map[string]any{"type": "file", "encoding": "base64", "size": len(text), "name": path[strings.LastIndex(path, "/")+1:], "path": path,
			"content": base64.StdEncoding.EncodeToString([]byte(text)), "sha": blobSHA(text), "html_url": "https://github.example/acme/api/blob/" + ref + "/" + path})
		return
	}
	var entries []map[string]any
	seen := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		rest, ok := strings.CutPrefix(p, path+"/")
		if path == "" {
			rest, ok = p, true
		}
		if !ok {
			continue
		}
		name, _, sub := strings.Cut(rest, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		typ, size := "file", len(files[p])
		if sub {
			typ, size = "dir", 0
		}
		entries = append(entries, map[string]any{"type": typ, "name": name, "path": strings.TrimPrefix(path+"/"+name, "/"), "size": size, "sha": blobSHA(p)})
	}
	if entries == nil {
		refuse(w, http.StatusNotFound, "Not Found")
		return
	}
	json.NewEncoder(w).Encode(entries)
}

func (s *standin) putContents(w http.ResponseWriter, r *http.Request) {
	var req struct{ Message, Content, SHA, Branch string }
	json.NewDecoder(r.Body).Decode(&req)
	text, err := base64.StdEncoding.DecodeString(req.Content)
	path := r.PathValue("path")
	s.mu.Lock()
	files, ok := s.files[req.Branch]
	old, exists := files[path]
	switch {
	case err != nil || !ok:
		s.mu.Unlock()
		refuse(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	case exists && req.SHA != blobSHA(old):
		s.mu.Unlock()
		refuse(w, http.StatusConflict, path+" does not match "+req.SHA)
		return
	}
	files[path] = string(text)
	c := s.commit(req.Branch, req.Message, "legate-bot", path)
	s.mu.Unlock()
	if s.wrote("put_file", w) {
		return
	}
	answer(w, http.StatusCreated, map[string]any{"content": map[string]any{"path": path, "sha": blobSHA(string(text))},
		"commit": map[string]any{"sha": c.SHA, "message": c.Message, "html_url": "https://github.example/acme/api/commit/" + c.SHA}})
}

// commitJSON is a commit as GitHub shows it, with files when full.
func commitJSON(c *gitCommit, full bool) map[string]any {
	out := map[string]any{"sha": c.SHA, "html_url": "https://github.example/acme/api/commit/" + c.SHA,
		"commit": map[string]any{"message": c.Message, "author": map[string]any{"name": c.Author, "email": c.Author + "@example.com", "date": c.Date}},
		"author": map[string]any{"login": c.Author, "id": 2}, "parents": []any{}}
	if full {
		var files []map[string]any
		for _, p := range c.Paths {
			files = append(files, map[string]any{"filename": p, "status": "added", "additions": 3, "deletions": 0, "changes": 3})
		}
		out["files"], out["stats"] = files, map[string]int{"additions": 3 * len(files), "deletions": 0, "total": 3 * len(files)}
	}
	return out
}

func (s *standin) listCommits(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since, _ := time.Parse(time.RFC3339, q.Get("since"))
	branch := q.Get("sha")
	if branch == "" {
		branch = "main"
	}
	s.mu.Lock()
	var all []map[string]any
	for _, c := range slices.Backward(s.commits) {
		if (c.Branch == branch || c.Branch == "main") && (q.Get("path") == "" || slices.Contains(c.Paths, q.Get("path"))) &&
			(q.Get("author") == "" || q.Get("author") == c.Author) && !c.Date.Before(since) {
			all = append(all, commitJSON(c, false))
		}
	}
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

func (s *standin) getCommit(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	s.mu.Lock()
	defer s.mu.Unlock()
	if head, ok := s.heads[sha]; ok {
		sha = head
	}
	i := slices.IndexFunc(s.commits, func(c *gitCommit) bool { return c.SHA == sha })
	if i < 0 {
		refuse(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha)
		return
	}
	json.NewEncoder(w).Encode(commitJSON(s.commits[i], true))
}

func (s *standin) listBranches(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var all []map[string]any
	for _, b := range slices.Sorted(maps.Keys(s.heads)) {
		all = append(all, map[string]any{"name": b, "commit": map[string]string{"sha": s.heads[b]}, "protected": b == "main"})
	}
	s.mu.Unlock()
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

func (s *standin) getRef(w http.ResponseWriter, r *http.Request) {
	b := r.PathValue("branch")
	s.mu.Lock()
	sha, ok := s.heads[b]
	s.mu.Unlock()
	if !ok {
		refuse(w, http.StatusNotFound, "Not Found")
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ref": "refs/heads/" + b, "object": map[string]string{"sha": sha, "type": "commit"}})
}

func (s *standin) createRef(w http.ResponseWriter, r *http.Request) {
	var req struct{ Ref, SHA string }
	json.NewDecoder(r.Body).Decode(&req)
	b, _ := strings.CutPrefix(req.Ref, "refs/heads/")
	s.mu.Lock()
	if _, ok := s.heads[b]; ok {
		s.mu.Unlock()
		refuse(w, http.StatusUnprocessableEntity, "Reference already exists")
		return
	}
	s.heads[b], s.files[b] = req.SHA, maps.Clone(s.files["main"])
	s.mu.Unlock()
	if s.wrote("create_branch", w) {
		return
	}
	answer(w, http.StatusCreated, map[string]any{"ref": req.Ref, "object": map[string]string{"sha": req.SHA, "type": "commit"}})
}

func (s *standin) listReleases(w http.ResponseWriter, r *http.Request) {
	json.NewEncoder(w).Encode(pageOf(s, w, r, s.releases))
}

func (s *standin) latestRelease(w http.ResponseWriter, r *http.Request) {
	i := slices.IndexFunc(s.releases, func(r release) bool { return !r.Draft && !r.Prerelease })
	json.NewEncoder(w).Encode(s.releases[i])
}
