package ghcore

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
	KindIssue   = "issue"
	KindPull    = "pull"
	kindComment = "comment"
)

// IssueID is the provider id of an issue or a pull request: owner/name#number.
func IssueID(repo string, number int) string { return repo + "#" + strconv.Itoa(number) }

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
func (c *Core) webPath(arg string) ([]string, bool) {
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

// ParseRepo accepts owner/name or a repository's web URL
// (https://github.com/owner/name/...) and checks the result against the
// pattern and the allow-list; it returns owner/name.
func (c *Core) ParseRepo(arg string) (string, error) {
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
func (c *Core) parseNumbered(arg string) (string, int, bool) {
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

// NumberArg names an issue or a pull request: by ref (of either kind), by
// GitHub's own id (owner/name#123, its URL), or by repo and number.
type NumberArg struct {
	Ref, Repo string
	Number    int
}

// Numbered resolves a NumberArg to its repository (checked against the
// allow-list) and number; what names the argument in errors.
func (c *Core) Numbered(call *connectors.Call, what string, in NumberArg) (owner, name string, number int, err error) {
	switch {
	case in.Ref != "" && (in.Repo != "" || in.Number != 0):
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: give %s, or repo and number, not both", what)
	case in.Ref == "" && (in.Repo == "" || in.Number <= 0):
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: give %s (a ref, owner/name#123 or its URL), or repo and a positive number", what)
	case in.Ref == "":
		repo, err := c.ParseRepo(in.Repo)
		owner, name, _ = strings.Cut(repo, "/")
		return owner, name, in.Number, err
	}
	repo, n, ok := c.parseNumbered(in.Ref)
	if strings.HasPrefix(in.Ref, KindIssue+"://") || strings.HasPrefix(in.Ref, KindPull+"://") {
		kind, _, _ := strings.Cut(in.Ref, "://")
		id, err := c.Kit.Resolve(call, kind, in.Ref)
		if err != nil {
			return "", "", 0, err
		}
		repo, n, ok = splitIssueID(id)
	}
	if !ok {
		return "", "", 0, legate.Errorf(legate.CodeInvalidArgument, "github: %s: %q is neither a ref, owner/name#123 nor an issue or pull request URL of this instance", what, in.Ref)
	}
	owner, name, err = c.repo(repo)
	return owner, name, n, err
}

// Self returns the login of token's account (GET /user), asked once per
// token and instance.
func (c *Core) Self(ctx context.Context, api *github.Client, token string) (string, error) {
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
		return "", MapError(ctx, err)
	}
	c.loginMu.Lock()
	c.login[key] = u.GetLogin()
	c.loginMu.Unlock()
	return u.GetLogin(), nil
}
