package connections

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// liftToken is c, whose token responses that hold a token in their
// object field (Slack's authed_user: the person's token, beside the
// bot's at the top) answer with that token at the top instead, its
// refresh token and lifetime too, so that the connection keeps the
// person's token.
func liftToken(c *http.Client, field string) *http.Client {
	out := *c
	out.Transport = lifter{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport), field: field}
	return &out
}

// lifter rewrites the token responses of its base (see liftToken).
type lifter struct {
	base  http.RoundTripper
	field string
}

// maxTokenResponse bounds the token response read to rewrite it.
const maxTokenResponse = 1 << 20

func (l lifter) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.base.RoundTrip(r)
	if err != nil || !strings.Contains(res.Header.Get("Content-Type"), "json") {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxTokenResponse))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return res, nil
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(top[l.field], &inner) != nil || len(inner["access_token"]) == 0 {
		return res, nil
	}
	for _, k := range []string{"access_token", "refresh_token", "expires_in", "token_type", "scope"} {
		delete(top, k)
		if v, ok := inner[k]; ok {
			top[k] = v
		}
	}
	delete(top, l.field)
	body, _ = json.Marshal(top)
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	res.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return res, nil
}
