package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Client calls a running server's admin API.
type Client struct {
	// URL is the server's base URL; a trailing /mcp is taken off.
	URL string
	// Token is the admin token, or with authentication on a bearer token
	// of the role the call needs.
	Token string
	// TokenFrom names where Token came from, for the error of a call the
	// server refuses (401, 403): a flag ("--token") or an environment
	// variable. Empty, it is AdminTokenEnv when Token is that variable's
	// value (the CLI's --token defaults to it), else "--token".
	TokenFrom string
	// HTTP defaults to http.DefaultClient.
	HTTP *http.Client
}

// AdminTokenEnv is the environment variable of the admin API's token: the
// server's (its admin API is off without it) and the CLI's, sent to the
// server by the commands that ask it (legate status, legate doctor).
const AdminTokenEnv = "LEGATE_ADMIN_TOKEN"

// maxStatusBody bounds the answer a Client reads.
const maxStatusBody = 4 << 20

// Status asks for GET /admin/v1/status. Its errors name the URL asked.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var s Status
	if err := c.Do(ctx, http.MethodGet, "/admin/v1/status", nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Do sends method path (such as "/admin/v1/approvals?state=pending") with
// body as JSON, when not nil, and decodes the answer into out, when not
// nil. An answer that is not a success is an *Error; every error names
// the URL asked.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	u := strings.TrimSuffix(strings.TrimSuffix(c.URL, "/"), "/mcp") + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: %w", u, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // the *url.Error would name the URL twice
		}
		return fmt.Errorf("cannot reach the server at %s: %w", u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := answerError(resp.StatusCode, raw)
		e.URL = u
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			e.refused = c.refusal(resp.StatusCode)
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s: not the answer expected: %w", u, err)
		}
	}
	return nil
}

// answerError reads the error of an answer with status: the API's
// {"error": {"code", "message"}}, an older server's {"error": "..."}, or
// any other body (a proxy's page) as the message, its code that of the
// status.
func answerError(status int, body []byte) *Error {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	e := &Error{Status: status}
	if json.Unmarshal(body, &v) == nil && len(v.Error) > 0 {
		if json.Unmarshal(v.Error, e) != nil || e.Message == "" {
			json.Unmarshal(v.Error, &e.Message)
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(body))
	}
	if e.Code == "" {
		e.Code = codeOf(status)
	}
	return e
}

// refusal is what the error of a call refused with status says of the
// token: which one was sent, from where, and what it must be. It is the
// one place the CLI's commands that ask a server explain its token.
func (c *Client) refusal(status int) *refusal {
	from := c.TokenFrom
	if from == "" {
		from = "--token"
		if c.Token != "" && c.Token == os.Getenv(AdminTokenEnv) {
			from = AdminTokenEnv
		}
	}
	what := "refused the admin token from " + from
	if c.Token == "" {
		what = "asks for an admin token and none was sent"
	}
	fix := fmt.Sprintf("set %s to the token the server was started with (or, with authentication on, a token of the admin role), or pass --token", AdminTokenEnv)
	if status == http.StatusForbidden {
		fix = fmt.Sprintf("%s is the admin API's token: the server must be started with it set and the CLI send the same (or, with authentication on, a token of the role the call needs)", AdminTokenEnv)
	}
	return &refusal{what, fix}
}

// RefreshUpstream asks POST /admin/v1/upstreams/{id}/refresh. A server
// builds an upstream within a second of its store taking one, so a 404 is
// asked again for up to wait.
func (c *Client) RefreshUpstream(ctx context.Context, id string, wait time.Duration) (*Refresh, error) {
	var res Refresh
	path := "/admin/v1/upstreams/" + url.PathEscape(id) + "/refresh"
	err := c.Do(ctx, http.MethodPost, path, nil, &res)
	for deadline := time.Now().Add(wait); err != nil && time.Now().Before(deadline); err = c.Do(ctx, http.MethodPost, path, nil, &res) {
		if e := (*Error)(nil); !errors.As(err, &e) || e.Status != http.StatusNotFound {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return &res, err
}

// Remove asks DELETE /admin/v1/{kind}s/{id}: kind is "connector" or "upstream".
func (c *Client) Remove(ctx context.Context, kind, id string) error {
	return c.Do(ctx, http.MethodDelete, "/admin/v1/"+kind+"s/"+url.PathEscape(id), nil, nil)
}
