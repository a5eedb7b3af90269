package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// The kinds of the refs the connector hands out. An issue's and a pull
// request's ids share a form (owner/name#number), and a tool taking one
// accepts the other's ref: on GitHub every pull request is an issue.
const (
	kindIssue   = "issue"
	kindPull    = "pull"
	kindComment = "comment"
)

// issueID is the provider id of an issue or a pull request: owner/name#number.
func issueID(repo string, number int) string { return repo + "#" + strconv.Itoa(number) }

func splitIssueID(id string) (repo string, number int, ok bool) {
	repo, num, found := strings.Cut(id, "#")
	n, err := strconv.Atoi(num)
	return repo, n, found && err == nil && n > 0
}

// webHosts are the hosts whose web URLs name this instance's issues,
// pull requests and repositories: github.com for api.github.com, the
// server's own host for GitHub Enterprise.
func webHosts(base string) []string {
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	h := strings.ToLower(u.Hostname())
	if h == "api.github.com" {
		return []string{"github.com", "www.github.com"}
	}
	return []string{h}
}

// webPath returns the path segments of a web URL of one of c's hosts.
func (c *Connector) webPath(arg string) ([]string, bool) {
	u, err := url.Parse(arg)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, false
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range c.web {
		if h == host {
			return strings.Split(strings.Trim(u.Path, "/"), "/"), true
		}
	}
	return nil, false
}

// parseRepo accepts owner/name or a repository's web URL
// (https://github.com/owner/name/...) and checks the result against the
// pattern and the allow-list; it returns owner/name.
func (c *Connector) parseRepo(arg string) (string, error) {
	if strings.Contains(arg, "://") {
		seg, ok := c.webPath(arg)
		if !ok || len(seg) < 2 {
			return "", legate.Errorf(legate.CodeInvalidArgument, "github: repo: %q is not a repository URL of this instance (hosts %s); give owner/name", arg, strings.Join(c.web, ", "))
		}
		arg = seg[0] + "/" + strings.TrimSuffix(seg[1], ".git")
	}
	owner, name, err := c.repo(arg)
	return owner + "/" + name, err
}

// parseNumbered accepts owner/name#123 or an issue's or pull request's
// web URL (…/owner/name/issues/123, …/pull/123) and returns the
// repository and number, unchecked.
func (c *Connector) parseNumbered(arg string) (string, int, bool) {
	if !strings.Contains(arg, "://") {
		return splitIssueID(arg)
	}
	seg, ok := c.webPath(arg)
	if !ok || len(seg) < 4 || (seg[2] != "issues" && seg[2] != "pull" && seg[2] != "pulls") {
		return "", 0, false
	}
	n, err := strconv.Atoi(seg[3])
	return seg[0] + "/" + seg[1], n, err == nil && n > 0
}

// numberArg names an issue or a pull request: by ref (of either kind), by
// GitHub's own id (owner/name#123, its URL), or by repo and number.
type numberArg struct {
	ref, repo string
	number    int
}

// numbered resolves a numberArg to its repository (checked against the
// allow-list) and number; what names the argument in errors.
func (c *Connector) numbered(call *connectors.Call, what string, in numberArg) (owner, name string, number int, err error) {
	switch {
	case in.ref != "" && (in.repo != "" || in.number != 0):
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: give %s, or repo and number, not both", what)
	case in.ref == "" && (in.repo == "" || in.number <= 0):
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: give %s (a ref, owner/name#123 or its URL), or repo and a positive number", what)
	case in.ref == "":
		repo, err := c.parseRepo(in.repo)
		owner, name, _ = strings.Cut(repo, "/")
		return owner, name, in.number, err
	}
	repo, n, ok := c.parseNumbered(in.ref)
	if strings.HasPrefix(in.ref, kindIssue+"://") || strings.HasPrefix(in.ref, kindPull+"://") {
		kind, _, _ := strings.Cut(in.ref, "://")
		id, err := c.kit.Resolve(call, kind, in.ref)
		if err != nil {
			return "", "", 0, err
		}
		repo, n, ok = splitIssueID(id)
	}
	if !ok {
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: %s: %q is neither a ref, owner/name#123 nor an issue or pull request URL of this instance", what, in.ref)
	}
	owner, name, err = c.repo(repo)
	return owner, name, n, err
}

// self returns the login of token's account (GET /user), asked once per
// token and instance.
func (c *Connector) self(ctx context.Context, api *github.Client, token string) (string, error) {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	c.loginMu.Lock()
	login, ok := c.login[key]
	c.loginMu.Unlock()
	if ok {
		return login, nil
	}
	u, _, err := api.Users.Get(ctx, "")
	if err != nil {
		return "", mapError(ctx, err)
	}
	c.loginMu.Lock()
	c.login[key] = u.GetLogin()
	c.loginMu.Unlock()
	return u.GetLogin(), nil
}
