package github_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// otherRepos are repositories the stand-in's search finds besides acme/api.
var otherRepos = []string{"acme/web", "acme/cli", "acme/docs", "acme/ops", "acme/sdk", "acme/site", "other/lib"}

func (s *standin) mountSearch(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v3/search/code", s.wrap("search_code", s.searchCode))
	mux.HandleFunc("GET /api/v3/search/issues", s.wrap("search_issues", s.searchIssues))
	mux.HandleFunc("GET /api/v3/search/repositories", s.wrap("search_repositories", s.searchRepos))
	mux.HandleFunc("GET /api/v3/notifications", s.wrap("notifications", s.listNotifications))
}

// listNotifications answers the token's account's notifications: 9,
// every third read, every other about a pull request, and the last in
// other/lib; read ones only with all=true.
func (s *standin) listNotifications(w http.ResponseWriter, r *http.Request) {
	var all []map[string]any
	for i := range 9 {
		repo, typ, kind := "acme/api", "Issue", "issues"
		if i%2 == 1 {
			typ, kind = "PullRequest", "pulls"
		}
		if i == 8 {
			repo = "other/lib"
		}
		unread := i%3 != 0
		if !unread && r.URL.Query().Get("all") != "true" {
			continue
		}
		all = append(all, map[string]any{"id": fmt.Sprint(100 + i), "unread": unread, "reason": "review_requested", "updated_at": "2026-01-02T03:04:05Z",
			"repository": map[string]any{"id": 1, "full_name": repo},
			"subject":    map[string]any{"title": fmt.Sprint("thing ", i), "type": typ, "url": fmt.Sprintf("%s/api/v3/repos/%s/%s/%d", s.srv.URL, repo, kind, i+1)}})
	}
	json.NewEncoder(w).Encode(pageOf(s, w, r, all))
}

// query splits a search query into its words and the repo: qualifiers.
func query(r *http.Request) (words, repos []string) {
	for _, f := range strings.Fields(r.URL.Query().Get("q")) {
		if repo, ok := strings.CutPrefix(f, "repo:"); ok {
			repos = append(repos, repo)
		} else if !strings.Contains(f, ":") {
			words = append(words, strings.ToLower(f))
		}
	}
	return words, repos
}

// matches reports whether text holds every word and repo is among repos
// (any repo when none).
func matches(text, repo string, words, repos []string) bool {
	return (len(repos) == 0 || slices.Contains(repos, repo)) &&
		!slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(strings.ToLower(text), w) })
}

// found answers a search's page of all.
func found[T any](s *standin, w http.ResponseWriter, r *http.Request, all []T) {
	json.NewEncoder(w).Encode(map[string]any{"total_count": len(all), "incomplete_results": false, "items": pageOf(s, w, r, all)})
}

func (s *standin) searchCode(w http.ResponseWriter, r *http.Request) {
	words, repos := query(r)
	s.mu.Lock()
	var all []map[string]any
	hit := func(repo, path, text string) {
		if matches(text, repo, words, repos) {
			all = append(all, map[string]any{"name": path[strings.LastIndex(path, "/")+1:], "path": path, "sha": blobSHA(text),
				"html_url": "https://github.example/" + repo + "/blob/main/" + path, "repository": map[string]any{"id": 1, "full_name": repo}})
		}
	}
	for _, p := range slices.Sorted(maps.Keys(s.files["main"])) {
		hit("acme/api", p, s.files["main"][p])
	}
	for _, repo := range otherRepos {
		hit(repo, "main.go", "package main // timeout")
	}
	s.mu.Unlock()
	found(s, w, r, all)
}

func (s *standin) searchIssues(w http.ResponseWriter, r *http.Request) {
	words, repos := query(r)
	s.mu.Lock()
	var all []map[string]any
	for _, is := range slices.Backward(s.issues) {
		if matches(is.Title+" "+is.Body, "acme/api", words, repos) {
			b, _ := json.Marshal(is)
			var m map[string]any
			json.Unmarshal(b, &m)
			m["repository_url"] = s.srv.URL + "/api/v3/repos/acme/api"
			all = append(all, m)
		}
	}
	for i, repo := range otherRepos {
		if matches("issue elsewhere", repo, words, repos) {
			all = append(all, map[string]any{"id": 90 + i, "number": 1, "title": "issue elsewhere", "state": "open", "repository_url": s.srv.URL + "/api/v3/repos/" + repo})
		}
	}
	s.mu.Unlock()
	found(s, w, r, all)
}

func (s *standin) searchRepos(w http.ResponseWriter, r *http.Request) {
	words, repos := query(r)
	var all []map[string]any
	for i, repo := range append([]string{"acme/api"}, otherRepos...) {
		if matches(repo+" service", repo, words, repos) {
			all = append(all, map[string]any{"id": i + 1, "full_name": repo, "name": repo[strings.Index(repo, "/")+1:], "description": repo + " service",
				"private": false, "stargazers_count": 10 * i, "language": "Go", "default_branch": "main", "html_url": "https://github.example/" + repo})
		}
	}
	found(s, w, r, all)
}
