// Package ghcore is the core the github connector's toolsets share: a
// go-github client per attempt, the mapping of its errors to canonical
// ones, GitHub's ids and URLs beside signed refs, the repositories
// allow-list, paging by signed cursor, and writes done at most once,
// found again after a lost answer by marker or by content.
package ghcore

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Limits the toolsets share.
const (
	// DefaultPage and MaxPage are the page size of the list tools.
	DefaultPage, MaxPage = 30, 100
	// MaxBodyBytes bounds the body of an issue, a comment, a pull request
	// or a review (GitHub's own limit is 65536 characters; the marker
	// needs some room).
	MaxBodyBytes  = 60000
	MaxTitleBytes = 256
)

// Core is what an instance's tools share.
type Core struct {
	// BaseURL is the config's base_url.
	BaseURL string
	// Repositories is the config's allow-list, as written.
	Repositories []string
	// Kit is the instance's SaaS kit.
	Kit *saas.Kit
	// HTTP is the guarded client every request goes through.
	HTTP *http.Client

	web     []string // hosts of the web URLs of issues and pull requests
	repos   []string // lower-cased allow-list, empty for all
	loginMu sync.Mutex
	login   map[string]string // the token's login, by token digest
}

// APIVersion is the REST API version the connector speaks: go-github
// sends it as X-GitHub-Api-Version (a test holds the two together).
const APIVersion = "2022-11-28"

// New returns the core of an instance.
func New(kit *saas.Kit, client *http.Client, baseURL string, repositories []string) *Core {
	c := &Core{BaseURL: baseURL, Repositories: repositories, Kit: kit, HTTP: client, web: webHosts(baseURL), login: map[string]string{}}
	for _, r := range repositories {
		c.repos = append(c.repos, strings.ToLower(r))
	}
	return c
}

// Client is a GitHub client with token, new for each attempt: go-github
// remembers a rate limit per client and refuses later calls unsent.
func (c *Core) Client(token string) (*github.Client, error) {
	api, err := github.NewClient(c.HTTP).WithAuthToken(token).WithEnterpriseURLs(c.BaseURL, c.BaseURL)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: base_url: %v", err)
	}
	return api, nil
}

// Read runs fn through Kit.Read with a new client per attempt, its
// go-github errors made canonical.
func (c *Core) Read(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, api *github.Client) error) error {
	return c.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.Client(token)
		if err != nil {
			return err
		}
		return MapError(ctx, fn(ctx, api))
	})
}

// RepoIn is the argument of a tool on one repository.
type RepoIn struct {
	Repo string `json:"repo" jsonschema:"the repository, owner/name or its URL"`
}

// RepoPageIn is the argument of a list tool on one repository.
type RepoPageIn struct {
	saas.Page
	RepoIn
}

// Allowed reports whether repo (owner/name) is within the allow-list.
func (c *Core) Allowed(repo string) bool {
	return len(c.repos) == 0 || slices.Contains(c.repos, strings.ToLower(repo))
}

// RepoOf parses and checks a repo argument and returns its parts.
func (c *Core) RepoOf(arg string) (owner, name string, err error) {
	repo, err := c.ParseRepo(arg)
	owner, name, _ = strings.Cut(repo, "/")
	return owner, name, err
}

// IsNotFound reports whether err is GitHub's 404.
func IsNotFound(ctx context.Context, err error) bool {
	return legate.CodeOf(MapError(ctx, err)) == legate.CodeNotFound
}
