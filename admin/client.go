package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Client calls a running server's admin API.
type Client struct {
	// URL is the server's base URL; a trailing /mcp is taken off.
	URL string
	// Token is the admin token, or with authentication on a bearer token
	// of the role the call needs.
	Token string
	// HTTP defaults to http.DefaultClient.
	HTTP *http.Client
}

// maxStatusBody bounds the status answer a Client reads.
const maxStatusBody = 4 << 20

// Status asks for GET /admin/v1/status. Its errors name the URL asked.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	u := strings.TrimSuffix(strings.TrimSuffix(c.URL, "/"), "/mcp") + "/admin/v1/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
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
		return nil, fmt.Errorf("cannot reach the server at %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		e := answerError(resp.StatusCode, body)
		e.URL = u
		if resp.StatusCode == http.StatusUnauthorized && c.Token == "" {
			e.Message += " (pass --token or set LEGATE_ADMIN_TOKEN)"
		}
		return nil, e
	}
	var s Status
	if err := json.Unmarshal(body, &s); err != nil {
		return nil, fmt.Errorf("%s: not a status: %w", u, err)
	}
	return &s, nil
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
