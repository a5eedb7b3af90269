package stcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The connector speaks Stripe's REST API itself: form-encoded requests,
// JSON answers, and the fields of the objects its tools read, typed in
// each toolset. stripe-go's single package holds the whole API and was a
// tenth of the binary for a few endpoints.

// APIVersion is the Stripe-Version sent with each request: the version the
// objects are read at (stripe-go v82's).
const APIVersion = "2025-08-27.basil"

// userAgent names the client to Stripe.
const userAgent = "legate-stripe/1"

// maxBody bounds an answer read.
const maxBody = 16 << 20

// apiError is Stripe's error object, with the answer's status.
type apiError struct {
	HTTPStatusCode int    `json:"-"`
	Type           string `json:"type"`
	Code           string `json:"code"`
	Msg            string `json:"message"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("stripe: %d %s %s: %s", e.HTTPStatusCode, e.Type, e.Code, e.Msg)
}

// The error types and codes mapError tells apart.
const (
	errorTypeIdempotency = "idempotency_error"
	errorCodeRateLimit   = "rate_limit"
)

// errNotJSON is a 2xx answer whose body is not the JSON expected.
var errNotJSON = errors.New("stripe: the answer's body is not the JSON expected")

// Expandable is an object Stripe sends as its id, or whole when expanded.
type Expandable struct{ ID string }

// UnmarshalJSON reads an id or an object with an id.
func (e *Expandable) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &e.ID)
	}
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	e.ID = o.ID
	return nil
}

// IDOf is e's id, "" for nil.
func IDOf(e *Expandable) string {
	if e == nil {
		return ""
	}
	return e.ID
}

// Page is one page of a Stripe list or search: its objects, has_more and,
// for a search, next_page.
type Page[T any] struct {
	HasMore  bool   `json:"has_more"`
	NextPage string `json:"next_page"`
	Data     []*T   `json:"data"`
}

// Request is one request to Stripe: its params, form-encoded (in the query
// of a GET), and for a write its Idempotency-Key.
type Request struct {
	Method, Path string
	Params       url.Values
	Idempotency  string
}

// do sends r with key and decodes a 2xx answer into v; any other answer
// is an *apiError, or errNotJSON wrapped when the body is not JSON.
func (c *Core) do(ctx context.Context, r Request, key string, v any) error {
	u := c.base + r.Path
	var body io.Reader
	if r.Method == http.MethodGet || r.Method == http.MethodDelete {
		if len(r.Params) > 0 {
			u += "?" + r.Params.Encode()
		}
	} else {
		body = strings.NewReader(r.Params.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Stripe-Version", APIVersion)
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.Idempotency != "" {
		req.Header.Set("Idempotency-Key", r.Idempotency)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var e struct {
			Error *apiError `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == nil {
			return fmt.Errorf("stripe: a %d answer without a Stripe error in its body", resp.StatusCode)
		}
		e.Error.HTTPStatusCode = resp.StatusCode
		return e.Error
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return nil
}
