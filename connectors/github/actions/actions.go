// Package actions holds the github connector's actions toolset: workflow
// runs, their failed jobs and the tails of their logs; re-run.
package actions

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Bounds of get_workflow_run.
const (
	// MaxLogBytes bounds the tail of a failed job's log.
	MaxLogBytes = 8000
	// maxFailedLogs bounds the failed jobs whose log is read.
	maxFailedLogs = 3
	// maxLogRead bounds the bytes of a log read to find its tail.
	maxLogRead = 32 << 20
)

// logHosts are the hosts, besides base_url's, GitHub sends a job's log
// from (the Location of its 302): github.com's log storage.
var logHosts = []string{".actions.githubusercontent.com", ".blob.core.windows.net"}

// Tools are the tools of the actions toolset.
type Tools struct{ *ghcore.Core }

// Run is a workflow run.
type Run struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	Event      string    `json:"event" jsonschema:"what started it: push, pull_request, schedule, workflow_dispatch, ..."`
	Status     string    `json:"status" jsonschema:"queued, in_progress, completed, ..."`
	Conclusion string    `json:"conclusion,omitempty" jsonschema:"success, failure, cancelled, skipped, timed_out, ..."`
	Branch     string    `json:"branch,omitempty"`
	HeadSHA    string    `json:"head_sha"`
	Number     int       `json:"run_number"`
	Attempt    int       `json:"run_attempt,omitempty"`
	URL        string    `json:"url,omitempty"`
	CreatedAt  time.Time `json:"created_at,omitzero"`
	StartedAt  time.Time `json:"run_started_at,omitzero" jsonschema:"when its latest attempt started"`
}

// Job is a job of a run.
type Job struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	Status       string   `json:"status"`
	Conclusion   string   `json:"conclusion,omitempty"`
	URL          string   `json:"url,omitempty"`
	FailedSteps  []string `json:"failed_steps,omitempty" jsonschema:"the steps that failed, by number and name"`
	LogTail      string   `json:"log_tail,omitempty" jsonschema:"the end of a failed job's log"`
	LogTruncated bool     `json:"log_truncated,omitempty" jsonschema:"log_tail is only the end; the whole log is at url"`
	LogError     string   `json:"log_error,omitempty" jsonschema:"why the log could not be read"`
}

// RunDetail is a run with its jobs.
type RunDetail struct {
	Run
	Jobs          []Job `json:"jobs"`
	JobsTruncated bool  `json:"jobs_truncated,omitempty" jsonschema:"the run has more jobs than the connector reads (100)"`
}

type listRunsIn struct {
	ghcore.RepoPageIn
	Branch string `json:"branch,omitempty"`
	Status string `json:"status,omitempty" jsonschema:"completed, success, failure, in_progress, queued, ..."`
	Event  string `json:"event,omitempty" jsonschema:"push, pull_request, ..."`
}

type runIn struct {
	ghcore.RepoIn
	RunID int64 `json:"run_id" jsonschema:"the run's id, from list_workflow_runs"`
}

type rerunIn struct {
	runIn
	FailedOnly bool `json:"failed_only,omitempty" jsonschema:"re-run only the failed jobs (and those depending on them)"`
}

// List returns the toolset's tools.
func (t Tools) List() []connectors.Tool {
	page := fmt.Sprintf(" A page at a time: limit (default %d, at most %d) and cursor.", ghcore.DefaultPage, ghcore.MaxPage)
	return []connectors.Tool{
		connectors.Returning[saas.List[Run]](connectors.NewTool("list_workflow_runs",
			"List a repository's workflow runs, newest first: branch, status, event."+page, legate.ClassRead, t.runs)),
		connectors.Returning[RunDetail](connectors.NewTool("get_workflow_run",
			fmt.Sprintf("Why did a run fail: the run, its jobs, the failed jobs' failed steps and the last %d bytes of the log of each failed job (at most %d).", MaxLogBytes, maxFailedLogs),
			legate.ClassRead, t.run)),
		connectors.Returning[Run](connectors.NewTool("rerun_workflow_run",
			"Re-run a completed workflow run, or only its failed jobs (failed_only); returns the run, queued again. "+saas.OnceNote, legate.ClassWrite, t.rerun)),
	}
}

func runOf(r *github.WorkflowRun) Run {
	return Run{ID: r.GetID(), Name: r.GetName(), Event: r.GetEvent(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), Branch: r.GetHeadBranch(),
		HeadSHA: r.GetHeadSHA(), Number: r.GetRunNumber(), Attempt: r.GetRunAttempt(), URL: r.GetHTMLURL(), CreatedAt: ghcore.UTC(r.CreatedAt), StartedAt: ghcore.UTC(r.RunStartedAt)}
}

func runLine(r Run) string {
	return fmt.Sprintf("%d %s #%d on %s (%s): %s %s %s", r.ID, r.Name, r.Number, r.Branch, r.Event, r.Status, r.Conclusion, r.URL)
}

func (t Tools) runs(ctx context.Context, call *connectors.Call, in *listRunsIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	out, err := ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]Run, *github.Response, error) {
		res, resp, err := api.Actions.ListRepositoryWorkflowRuns(ctx, owner, name, &github.ListWorkflowRunsOptions{Branch: in.Branch, Status: in.Status, Event: in.Event, ListOptions: lo})
		if err != nil {
			return nil, nil, err
		}
		var items []Run
		for _, r := range res.WorkflowRuns {
			items = append(items, runOf(r))
		}
		return items, resp, nil
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "run(s)", runLine), nil
}

func (t Tools) run(ctx context.Context, call *connectors.Call, in *runIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	var out RunDetail
	err = t.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		r, _, err := api.Actions.GetWorkflowRunByID(ctx, owner, name, in.RunID)
		if err != nil {
			return err
		}
		jobs, resp, err := api.Actions.ListWorkflowJobs(ctx, owner, name, in.RunID, &github.ListWorkflowJobsOptions{Filter: "latest", ListOptions: github.ListOptions{PerPage: 100}})
		if err != nil {
			return err
		}
		out = RunDetail{Run: runOf(r), Jobs: []Job{}, JobsTruncated: resp.NextPage > 0}
		logs := 0
		for _, j := range jobs.Jobs {
			job := Job{ID: j.GetID(), Name: j.GetName(), Status: j.GetStatus(), Conclusion: j.GetConclusion(), URL: j.GetHTMLURL()}
			for _, s := range j.Steps {
				if s.GetConclusion() == "failure" {
					job.FailedSteps = append(job.FailedSteps, fmt.Sprintf("%d %s", s.GetNumber(), s.GetName()))
				}
			}
			if job.Conclusion == "failure" && logs < maxFailedLogs {
				logs++
				if err := t.logTail(ctx, api, owner, name, &job); err != nil {
					return err
				}
			}
			out.Jobs = append(out.Jobs, job)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(runLine(out.Run))
	for _, j := range out.Jobs {
		fmt.Fprintf(&b, "\n\njob %s: %s %s", j.Name, j.Status, j.Conclusion)
		for _, s := range j.FailedSteps {
			b.WriteString("\n  failed step " + s)
		}
		if j.LogTail != "" {
			b.WriteString("\n  log (end):\n" + j.LogTail)
		}
		if j.LogError != "" {
			b.WriteString("\n  log: " + j.LogError)
		}
	}
	return &legate.Result{Structured: out, Text: b.String()}, nil
}

// logTail sets job's log tail: GitHub answers the logs endpoint with a
// 302 to the log's storage, followed only to base_url's host or GitHub's
// log hosts, without the token. A log that cannot be read is said in
// LogError; only a failure of the API itself fails the call.
func (t Tools) logTail(ctx context.Context, api *github.Client, owner, name string, job *Job) error {
	loc, resp, err := api.Actions.GetWorkflowJobLogs(ctx, owner, name, job.ID, 0)
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 && resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusGone {
			return github.CheckResponse(resp.Response) // its rate limits and errors, from the status and headers
		}
		job.LogError = "GitHub has no log for this job (expired or not yet written)"
		return nil
	}
	if !t.logHost(loc) {
		job.LogError = "GitHub sent the log from " + loc.Host + ", not a host the connector reads logs from; open url"
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return err
	}
	res, err := t.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		job.LogError = "the log's storage answered " + res.Status
		return nil
	}
	tail, cut, err := readTail(io.LimitReader(res.Body, maxLogRead), MaxLogBytes)
	job.LogTail, job.LogTruncated = tail, cut
	return err
}

// logHost reports whether a log's URL is on base_url's host or one of logHosts.
func (t Tools) logHost(u *url.URL) bool {
	base, err := url.Parse(t.BaseURL)
	if err == nil && strings.EqualFold(u.Host, base.Host) {
		return true
	}
	return u.Scheme == "https" && slices.ContainsFunc(logHosts, func(h string) bool { return strings.HasSuffix(strings.ToLower(u.Hostname()), h) })
}

// readTail reads r to its end and returns its last n bytes, from a line's
// start, and whether that is not all of it.
func readTail(r io.Reader, n int) (string, bool, error) {
	buf := make([]byte, 0, 2*n)
	chunk := make([]byte, 32<<10)
	cut := false
	for {
		k, err := r.Read(chunk)
		buf = append(buf, chunk[:k]...)
		if len(buf) > 2*n {
			buf, cut = append(buf[:0], buf[len(buf)-n:]...), true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", false, err
		}
	}
	if len(buf) > n {
		buf, cut = buf[len(buf)-n:], true
	}
	s := string(buf)
	if i := strings.IndexByte(s, '\n'); cut && i >= 0 {
		s = s[i+1:]
	}
	return s, cut, nil
}

func (t Tools) rerun(ctx context.Context, call *connectors.Call, in *rerunIn) (*legate.Result, error) {
	owner, name, err := t.RepoOf(in.Repo)
	if err != nil {
		return nil, err
	}
	if in.RunID <= 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: run_id: give the run's id, from list_workflow_runs")
	}
	out, err := ghcore.WriteOnce(ctx, t.Core, call, func(ctx context.Context, api *github.Client, _ string) (*Run, error) {
		var err error
		if in.FailedOnly {
			_, err = api.Actions.RerunFailedJobsByID(ctx, owner, name, in.RunID)
		} else {
			_, err = api.Actions.RerunWorkflowByID(ctx, owner, name, in.RunID)
		}
		if err != nil {
			return nil, err
		}
		r, _, err := api.Actions.GetWorkflowRunByID(ctx, owner, name, in.RunID)
		if err != nil {
			return nil, ghcore.Unsure(ctx, err)
		}
		out := runOf(r)
		return &out, nil
	}, func(ctx context.Context, api *github.Client, _ func() (string, error), _ string, since time.Time) (*Run, error) {
		// A re-run starts a new attempt of the run: one started since
		// (and not the first) is the lost re-run's. GitHub refuses to
		// re-run a run that is not completed, so a repeat could not
		// start a second attempt while the first runs anyway.
		r, _, err := api.Actions.GetWorkflowRunByID(ctx, owner, name, in.RunID)
		if err != nil || r.GetRunAttempt() < 2 || !ghcore.Recent(r.GetRunStartedAt(), since) {
			return nil, err
		}
		out := runOf(r)
		return &out, nil
	})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: out, Text: "re-running " + runLine(*out)}, nil
}
