package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// search are the tools of the search toolset.
type search struct{ *ghcore.Core }

type searchIn struct {
	saas.Page
	Query string `json:"query" jsonschema:"GitHub's search syntax, e.g. 'timeout language:go repo:acme/api' or 'is:pr is:open author:alice'"`
}

// CodeHit is a file search_code found.
type CodeHit struct {
	Repo string `json:"repo"`
	Path string `json:"path"`
	SHA  string `json:"sha,omitempty"`
	URL  string `json:"url,omitempty"`
}

// RepoHit is a repository search_repositories found.
type RepoHit struct {
	Repo          string    `json:"repo" jsonschema:"owner/name"`
	Description   string    `json:"description,omitempty"`
	Private       bool      `json:"private,omitempty"`
	Stars         int       `json:"stars,omitempty"`
	Language      string    `json:"language,omitempty"`
	DefaultBranch string    `json:"default_branch,omitempty"`
	URL           string    `json:"url,omitempty"`
	UpdatedAt     time.Time `json:"updated_at,omitzero"`
}

func (t search) tools() []connectors.Tool {
	page := fmt.Sprintf(" A page at a time: limit (default %d, at most %d) and cursor; GitHub gives 1,000 results at most. Within `repositories`, the query is limited to them with repo: qualifiers.", ghcore.DefaultPage, ghcore.MaxPage)
	return []connectors.Tool{
		connectors.Returning[saas.List[CodeHit]](connectors.NewTool("search_code",
			"Search code across repositories: the files matching, with their repository and path (read one with get_file)."+page, legate.ClassRead, t.code)),
		connectors.Returning[saas.List[model.Issue]](connectors.NewTool("search_issues",
			"Search issues and pull requests (issue.v1; provider_metadata.pull_request marks a pull request), e.g. 'is:issue is:open label:bug crash'."+page, legate.ClassRead, t.issues)),
		connectors.Returning[saas.List[RepoHit]](connectors.NewTool("search_repositories",
			"Search repositories by name, description, topic, language."+page, legate.ClassRead, t.repos)),
	}
}

// scoped is query limited to the allow-list by repo: qualifiers, which
// GitHub ORs together; results are filtered by allowed besides.
func (t search) scoped(query string) (string, error) {
	if strings.TrimSpace(query) == "" {
		return "", legate.Errorf(legate.CodeInvalidArgument, "github: query: must not be empty")
	}
	for _, r := range t.Repositories {
		query += " repo:" + r
	}
	return query, nil
}

// searchPage runs one page of a search; run returns the hits of a page.
func searchPage[T any](ctx context.Context, t search, call *connectors.Call, in *searchIn,
	run func(ctx context.Context, api *github.Client, q string, opts *github.SearchOptions) ([]T, *github.Response, error)) (saas.List[T], error) {
	q, err := t.scoped(in.Query)
	if err != nil {
		return saas.List[T]{}, err
	}
	return ghcore.ListPage(ctx, t.Core, call, in.Page, ghcore.DefaultPage, ghcore.MaxPage, func(ctx context.Context, api *github.Client, lo github.ListOptions) ([]T, *github.Response, error) {
		return run(ctx, api, q, &github.SearchOptions{ListOptions: lo})
	})
}

func (t search) code(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	out, err := searchPage(ctx, t, call, in, func(ctx context.Context, api *github.Client, q string, opts *github.SearchOptions) ([]CodeHit, *github.Response, error) {
		res, resp, err := api.Search.Code(ctx, q, opts)
		if err != nil {
			return nil, nil, err
		}
		var hits []CodeHit
		for _, h := range res.CodeResults {
			if repo := h.GetRepository().GetFullName(); t.Allowed(repo) {
				hits = append(hits, CodeHit{Repo: repo, Path: h.GetPath(), SHA: h.GetSHA(), URL: h.GetHTMLURL()})
			}
		}
		return hits, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "file(s)", func(h CodeHit) string { return h.Repo + " " + h.Path }), nil
}

func (t search) issues(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	out, err := searchPage(ctx, t, call, in, func(ctx context.Context, api *github.Client, q string, opts *github.SearchOptions) ([]model.Issue, *github.Response, error) {
		res, resp, err := api.Search.Issues(ctx, q, opts)
		if err != nil {
			return nil, nil, err
		}
		var hits []model.Issue
		for _, is := range res.Issues {
			_, repo, _ := strings.Cut(is.GetRepositoryURL(), "/repos/")
			if !ghcore.RepoPattern().MatchString(repo) || !t.Allowed(repo) {
				continue
			}
			m, err := t.IssueOf(call, repo, is)
			if err != nil {
				return nil, nil, err
			}
			if is.IsPullRequest() {
				m.ProviderMetadata["pull_request"] = true
			}
			hits = append(hits, m)
		}
		return hits, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "issue(s) and pull request(s)", func(is model.Issue) string {
		return fmt.Sprint(is.ProviderMetadata["repository"]) + " " + issueText(is, false)
	}), nil
}

func (t search) repos(ctx context.Context, call *connectors.Call, in *searchIn) (*legate.Result, error) {
	out, err := searchPage(ctx, t, call, in, func(ctx context.Context, api *github.Client, q string, opts *github.SearchOptions) ([]RepoHit, *github.Response, error) {
		res, resp, err := api.Search.Repositories(ctx, q, opts)
		if err != nil {
			return nil, nil, err
		}
		var hits []RepoHit
		for _, r := range res.Repositories {
			if t.Allowed(r.GetFullName()) {
				hits = append(hits, RepoHit{Repo: r.GetFullName(), Description: r.GetDescription(), Private: r.GetPrivate(), Stars: r.GetStargazersCount(),
					Language: r.GetLanguage(), DefaultBranch: r.GetDefaultBranch(), URL: r.GetHTMLURL(), UpdatedAt: ghcore.UTC(r.UpdatedAt)})
			}
		}
		return hits, resp, err
	})
	if err != nil {
		return nil, err
	}
	return ghcore.ListResult(out, "repositories", func(r RepoHit) string { return r.Repo + " " + r.Description }), nil
}
