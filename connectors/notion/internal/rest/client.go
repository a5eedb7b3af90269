// Package rest sends the notion connector's requests to the Notion API
// and decodes its objects (API 2025-09-03: pages, databases, data
// sources, users, comments), with one error mapping: every failure comes
// back canonical (connectors/saas).
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// exchange is what the transport saw of an attempt's last answer: its
// status and Retry-After.
type exchange struct {
	status     int
	retryAfter time.Duration
}

type exchangeKey struct{}

// errorBodyBytes bounds what the transport keeps of a failed answer.
const errorBodyBytes = 64 << 10

// Transport sends requests made for https://api.notion.com to Base, and
// records failed answers in the request context's exchange. A nil Base
// (base_url is not a URL) refuses every request.
type Transport struct {
	Base *url.URL
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Base == nil || t.Base.Host == "" {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, legate.Errorf(legate.CodeInvalidArgument, "notion: base_url: not a URL")
	}
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = t.Base.Scheme, t.Base.Host, ""
	if prefix := strings.TrimSuffix(t.Base.Path, "/"); prefix != "" {
		r.URL.Path = prefix + req.URL.Path
		r.URL.RawPath = ""
	}
	resp, err := t.Next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		ex.status = resp.StatusCode
		ex.retryAfter, _ = netguard.RetryAfter(resp.Header, time.Now())
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	// Keep a bounded copy of a failed answer's body and give the
	// connection back.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// mapError makes the error of a request canonical, with what the
// transport saw of the answer. ctx is the attempt's.
func mapError(ctx context.Context, ex *exchange, err error) error {
	var le *legate.Error
	var ne *notionapi.Error
	switch {
	case errors.As(err, &le):
		return le // the connector's own: a refused argument, lostTrack
	case errors.As(err, &ne) && ex.status >= 400:
		msg := "Notion answered " + strconv.Itoa(ex.status)
		if ne.Code != "" {
			msg += " " + string(ne.Code)
		}
		if ne.Message != "" {
			msg += ": " + ne.Message
		}
		return saas.StatusError("notion", ex.status, ex.retryAfter, msg)
	case ex.status >= 400:
		// A failed answer whose body is not Notion's error (a proxy's
		// HTML page): its status says what happened.
		return saas.StatusError("notion", ex.status, ex.retryAfter, "Notion answered "+strconv.Itoa(ex.status))
	case ex.status == http.StatusOK && !cutShort(ctx, err):
		// An answer that came whole but that does not decode as the
		// endpoint's.
		return saas.Mapping("notion", "%v", err)
	}
	return saas.Classify(ctx, err, "notion")
}

// cutShort reports whether err is an answer's body that did not arrive
// whole: the connection broke, or the attempt's time ran out.
func cutShort(ctx context.Context, err error) bool {
	var ne net.Error
	return ctx.Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &ne)
}

// maxAnswer bounds the body of an answer read.
const maxAnswer = 16 << 20

// Request is one request of the API: Method, Path under /v1/, Query
// parameters, and a Body sent as JSON (nil for none).
type Request struct {
	Method, Path string
	Query        url.Values
	Body         any
}

// Client sends requests on an HTTP client whose transport is a
// [Transport], with a Notion-Version.
type Client struct {
	HTTP    *http.Client
	Version string
}

// Send sends r with token and decodes a success's JSON into out (nil to
// drop it), making every failure canonical. Every request of the
// connector goes through it.
func (c *Client) Send(ctx context.Context, token string, r Request, out any) error {
	ex := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, ex)
	if err := c.roundTrip(ctx, token, r, out); err != nil {
		return mapError(ctx, ex, err)
	}
	return nil
}

func (c *Client) roundTrip(ctx context.Context, token string, r Request, out any) error {
	var body io.Reader
	if r.Body != nil {
		raw, err := json.Marshal(r.Body)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	u := "https://api.notion.com/v1/" + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Notion-Version", c.Version)
	req.Header.Set("Accept", "application/json")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer))
	if resp.StatusCode != http.StatusOK {
		ne := &notionapi.Error{}
		if err := dec.Decode(ne); err != nil || ne.Object != "error" {
			return errors.New("an answer that is not Notion's error")
		}
		return ne
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return dec.Decode(out)
}
