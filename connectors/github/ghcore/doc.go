// Package ghcore is the core the github connector's toolsets share: one
// go-github client per instance, the token of each call in its context,
// the mapping of its errors to canonical ones, GitHub's ids and URLs
// beside signed refs, the repositories allow-list, paging by signed
// cursor, and writes done at most once, found again after a lost answer
// by marker or by content.
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

	api     *github.Client // shared by every call; the token rides in the context
	apiErr  error          // base_url refused by go-github
	web     []string       // hosts of the web URLs of issues and pull requests
	repos   []string       // lower-cased allow-list, empty for all
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
	hc := *client
	hc.Transport = bearer{base: client.Transport}
	c.api, c.apiErr = github.NewClient(&hc).WithEnterpriseURLs(baseURL, baseURL)
	if c.apiErr == nil {
		// go-github would remember a rate limit it was answered and
		// refuse later calls unsent, for every token the client serves:
		// the kit's retries, honouring Retry-After, decide instead.
		c.api.DisableRateLimitCheck = true
	}
	return c
}

// Client is the instance's GitHub client and ctx carrying token, which
// the client's requests are authorised with. One client serves every
// call and token: making one per call cost more than the read's decoding.
func (c *Core) Client(ctx context.Context, token string) (context.Context, *github.Client, error) {
	if c.apiErr != nil {
		return ctx, nil, legate.Errorf(legate.CodeInvalidArgument, "github: base_url: %v", c.apiErr)
	}
	return context.WithValue(ctx, tokenKey{}, token), c.api, nil
}

type tokenKey struct{}

// bearer authorises each request with the token its context carries; base
// is the guarded client's transport.
type bearer struct{ base http.RoundTripper }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	token, _ := req.Context().Value(tokenKey{}).(string)
	if token == "" {
		return b.base.RoundTrip(req)
	}
	req = req.Clone(req.Context()) // a RoundTripper leaves its request as given
	req.Header.Set("Authorization", "Bearer "+token)
	return b.base.RoundTrip(req)
}

// Read runs fn through Kit.Read, its go-github errors made canonical.
func (c *Core) Read(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, api *github.Client) error) error {
	return c.Kit.Read(ctx, call, func(ctx context.Context, token string) error {
		ctx, api, err := c.Client(ctx, token)
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
