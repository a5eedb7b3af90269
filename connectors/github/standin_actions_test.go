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

type wfRun struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Event        string    `json:"event"`
	Status       string    `json:"status"`
	Conclusion   *string   `json:"conclusion"`
	HeadBranch   string    `json:"head_branch"`
	HeadSHA      string    `json:"head_sha"`
	RunNumber    int       `json:"run_number"`
	RunAttempt   int       `json:"run_attempt"`
	HTMLURL      string    `json:"html_url"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	RunStartedAt time.Time `json:"run_started_at"`
}

type wfStep struct {
	Number     int    `json:"number"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

type wfJob struct {
	ID         int64    `json:"id"`
	RunID      int64    `json:"run_id"`
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Conclusion string   `json:"conclusion"`
	HTMLURL    string   `json:"html_url"`
	Steps      []wfStep `json:"steps"`
}

// actionState is acme/api's workflow runs (oldest first), their jobs and
// the jobs' logs.
type actionState struct {
	runs []*wfRun
	jobs map[int64][]wfJob
	logs map[int64]string
	// logAuth counts log downloads that carried an Authorization header.
	logAuth int
}

// failedLog is the log of a seeded run's failed test job: long, ending
// in the failure.
var failedLog = strings.Repeat("2026-01-01T00:00:00Z ok   some/package 0.1s\n", 500) + "--- FAIL: TestRetry (0.02s)\nError: Process completed with exit code 1.\n"

func (s *standin) mountActions(mux *http.ServeMux) {
	s.jobs, s.logs = map[int64][]wfJob{}, map[int64]string{}
	for range 7 {
		s.seedRun()
	}
	a := "/api/v3/repos/acme/api/actions"
	mux.HandleFunc("GET "+a+"/runs", s.wrap("runs", s.listRuns))
	mux.HandleFunc("GET "+a+"/runs/{id}", s.wrap("run", s.getRun))
	mux.HandleFunc("GET "+a+"/runs/{id}/jobs", s.wrap("jobs", s.listJobs))
	mux.HandleFunc("GET "+a+"/jobs/{id}/logs", s.wrap("logs", s.jobLogs))
	mux.HandleFunc("POST "+a+"/runs/{id}/rerun", s.wrap("rerun_workflow_run", s.rerun))
	mux.HandleFunc("POST "+a+"/runs/{id}/rerun-failed-jobs", s.wrap("rerun_workflow_run", s.rerun))
	mux.HandleFunc("GET /blob/logs/{id}", s.blobLog)
}

// seedRun adds a completed, failed run of CI on main with three jobs:
// build passed, test failed (its step 3) with a log, lint failed with its
// log expired. It returns the run's id.
func (s *standin) seedRun() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.runs) + 1
	fail := "failure"
	r := &wfRun{ID: int64(500 + n), Name: "CI", Event: []string{"push", "pull_request"}[n%2], Status: "completed", Conclusion: &fail, HeadBranch: "main",
		HeadSHA: fmt.Sprintf("%040x", n), RunNumber: n, RunAttempt: 1, HTMLURL: fmt.Sprintf("https://github.example/acme/api/actions/runs/%d", 500+n),
		CreatedAt: s.tick(), UpdatedAt: s.clock, RunStartedAt: s.clock.Add(-time.Hour)}
	s.runs = append(s.runs, r)
	steps := func(failed int) []wfStep {
		var out []wfStep
		for i, name := range []string{"Set up job", "Checkout", "Run tests"} {
			c := "success"
			if i+1 == failed {
				c = "failure"
			}
			out = append(out, wfStep{Number: i + 1, Name: name, Status: "completed", Conclusion: c})
		}
		return out
	}
	for i, name := range []string{"build", "test", "lint"} {
		j := wfJob{ID: r.ID*10 + int64(i), RunID: r.ID, Name: name, Status: "completed", Conclusion: "failure", HTMLURL: r.HTMLURL + "/job/" + name, Steps: steps(3)}
		if i == 0 {
			j.Conclusion, j.Steps = "success", steps(0)
		}
		if i == 1 {
			s.logs[j.ID] = failedLog
		}
		s.jobs[r.ID] = append(s.jobs[r.ID], j)
	}
	return r.ID
}

func (s *standin) runOf(w http.ResponseWriter, r *http.Request) (*wfRun, bool) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.runs, func(r *wfRun) bool { return r.ID == id }); i >= 0 {
		return s.runs[i], true
	}
	refuse(w, http.StatusNotFound, "Not Found")
	return nil, false
}

func (s *standin) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	var all []wfRun
	for _, run := range slices.Backward(s.runs) {
		if (q.Get("branch") == "" || q.Get("branch") == run.HeadBranch) && (q.Get("event") == "" || q.Get("event") == run.Event) &&
			(q.Get("status") == "" || q.Get("status") == run.Status || run.Conclusion != nil && q.Get("status") == *run.Conclusion) {
			all = append(all, *run)
		}
	}
	s.mu.Unlock()
	page := pageOf(s, w, r, all)
	json.NewEncoder(w).Encode(map[string]any{"total_count": len(all), "workflow_runs": page})
}

func (s *standin) getRun(w http.ResponseWriter, r *http.Request) {
	if run, ok := s.runOf(w, r); ok {
		s.mu.Lock()
		out := *run
		s.mu.Unlock()
		json.NewEncoder(w).Encode(out)
	}
}

func (s *standin) listJobs(w http.ResponseWriter, r *http.Request) {
	run, ok := s.runOf(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	all := slices.Clone(s.jobs[run.ID])
	s.mu.Unlock()
	page := pageOf(s, w, r, all)
	json.NewEncoder(w).Encode(map[string]any{"total_count": len(all), "jobs": page})
}

// jobLogs answers as GitHub does: a 302 to the log's storage, here on the
// stand-in itself; 404 for a log that expired.
func (s *standin) jobLogs(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	_, ok := s.logs[id]
	s.mu.Unlock()
	if !ok {
		refuse(w, http.StatusNotFound, "Not Found")
		return
	}
	http.Redirect(w, r, fmt.Sprintf("%s/blob/logs/%d?sig=signed", s.srv.URL, id), http.StatusFound)
}

// blobLog is the log storage: it takes the signature in the URL, and
// counts a request carrying GitHub's token.
func (s *standin) blobLog(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	text, ok := s.logs[id]
	if r.Header.Get("Authorization") != "" {
		s.logAuth++
	}
	s.mu.Unlock()
	if !ok || r.URL.Query().Get("sig") != "signed" {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte(text))
}

func (s *standin) rerun(w http.ResponseWriter, r *http.Request) {
	run, ok := s.runOf(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	if run.Status != "completed" {
		s.mu.Unlock()
		refuse(w, http.StatusForbidden, "This workflow is already running")
		return
	}
	run.RunAttempt++
	run.Status, run.Conclusion, run.RunStartedAt = "queued", nil, s.tick()
	run.UpdatedAt = s.clock
	s.mu.Unlock()
	if s.wrote("rerun_workflow_run", w) {
		return
	}
	answer(w, http.StatusCreated, map[string]any{})
}
