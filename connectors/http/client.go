package httpconn

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/legate-mcp/legate"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// Response is the structured result of the call and request tools.
type Response struct {
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Headers holds the first value of each response header, keys in lower
	// case; Set-Cookie is left out.
	Headers map[string]string `json:"headers"`
	// Body is the body as text, when it is textual and valid UTF-8.
	Body string `json:"body,omitempty"`
	// BodyBase64 is the body in standard base64, when it is not text.
	BodyBase64 string `json:"body_base64,omitempty"`
	// Truncated reports that the body was cut at the size limit.
	Truncated bool `json:"truncated"`
	// Size is the length in bytes of the body returned.
	Size int `json:"size"`
}

// authHeader is the header that carries a call's credential.
type authHeader struct{ name, value string }

// auth resolves the instance's credentials for one call: the header to
// send and the secret values to mask in what comes back.
func (c *Connector) auth(ctx context.Context, creds connectors.Credentials) (*authHeader, *legate.Secrets, error) {
	has := func(name string) bool { return creds != nil && creds.Has(name) }
	get := func(name string) (string, error) {
		if !has(name) {
			return "", legate.Errorf(legate.CodeAuthExpired, "http: credential %s is not configured (auth: %s)", name, c.cfg.Auth)
		}
		v, err := creds.Get(ctx, name)
		if err != nil {
			return "", &legate.Error{Code: legate.CodeAuthExpired, Message: fmt.Sprintf("http: credential %s could not be resolved", name), Err: err}
		}
		return v, nil
	}
	mode := c.cfg.Auth
	if mode == AuthAuto {
		switch {
		case has("token"):
			mode = AuthBearer
		case has("username") && has("password"):
			mode = AuthBasic
		case c.cfg.HeaderName != "" && has("header_value"):
			mode = AuthHeader
		default:
			mode = AuthNone
		}
	}
	switch mode {
	case AuthBearer:
		token, err := get("token")
		if err != nil {
			return nil, nil, err
		}
		return credential("Authorization", "Bearer "+token)
	case AuthBasic:
		user, err := get("username")
		if err != nil {
			return nil, nil, err
		}
		var pass string
		if has("password") {
			if pass, err = get("password"); err != nil {
				return nil, nil, err
			}
		}
		return credential("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	case AuthHeader:
		v, err := get("header_value")
		if err != nil {
			return nil, nil, err
		}
		return credential(c.cfg.HeaderName, v)
	}
	return nil, nil, nil
}

// credential is the header to send and the secrets to mask: the value and
// its parts that are secret alone (the token after the scheme, Basic's
// user and password).
func credential(name, value string) (*authHeader, *legate.Secrets, error) {
	return &authHeader{name, value}, legate.NewSecrets(legate.CredentialParts(value)...), nil
}

// credentialHeaders are the headers that may carry a credential of this
// instance; a model may not set them and a cross-origin redirect drops them.
func (c *Connector) credentialHeaders() []string {
	hs := []string{"Authorization", "Cookie"}
	if c.cfg.HeaderName != "" {
		hs = append(hs, c.cfg.HeaderName)
	}
	return hs
}

func isCredentialHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Cookie", "Proxy-Authorization":
		return true
	}
	return false
}

// checkHeaders refuses headers a model may not set: malformed ones,
// transport-managed ones and credential carriers (auth comes only from the
// instance's credentials).
func checkHeaders(headers map[string]string, credentialHeader string) error {
	for name, value := range headers {
		switch {
		case !netguard.ValidHeaderName(name):
			return legate.Errorf(legate.CodeInvalidArgument, "http: header %q: not a valid header name", name)
		case !netguard.ValidHeaderValue(value):
			return legate.Errorf(legate.CodeInvalidArgument, "http: header %q: value holds control characters", name)
		case netguard.ReservedHeader(name):
			return legate.Errorf(legate.CodeInvalidArgument, "http: header %q is managed by the transport and cannot be set", name)
		case isCredentialHeader(name) || (credentialHeader != "" && strings.EqualFold(name, credentialHeader)):
			return legate.Errorf(legate.CodeInvalidArgument, "http: header %q cannot be set: credentials come only from the connector's configuration", name)
		}
	}
	return nil
}

// setHeaders layers the headers of a request: a default User-Agent, the
// instance's default_headers, the call's headers, then the credential.
func (c *Connector) setHeaders(h http.Header, call map[string]string, auth *authHeader) {
	h.Set("User-Agent", userAgent)
	for k, v := range c.cfg.DefaultHeaders {
		h.Set(k, v)
	}
	for k, v := range call {
		h.Set(k, v)
	}
	if auth != nil {
		h.Set(auth.name, auth.value)
	}
}

const userAgent = "Legate"

var absoluteURL = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// resolve returns the URL of path below base with query added. A path that
// is absolute, holds a dot segment (plain, encoded or double-encoded, or
// Tomcat's "..;"), a backslash or a control character is refused: it could
// leave the base URL on the server's side even where it does not on ours.
// A leading slash is relative to base_url too, not to the host root.
func resolve(base *url.URL, path string, query map[string]string) (*url.URL, error) {
	invalid := func(format string, args ...any) error {
		return legate.Errorf(legate.CodeInvalidArgument, "http: path: "+format, args...)
	}
	if absoluteURL.MatchString(path) || strings.HasPrefix(path, "//") {
		return nil, invalid("must be relative to base_url; absolute URLs are refused")
	}
	if strings.ContainsRune(path, '#') {
		return nil, invalid("must not hold a fragment")
	}
	path, rawQuery, _ := strings.Cut(path, "?")
	if _, err := url.PathUnescape(path); err != nil {
		return nil, invalid("invalid percent-encoding")
	}
	cur := path
	for range 4 {
		if strings.ContainsRune(cur, '\\') {
			return nil, invalid("must not hold a backslash")
		}
		for _, seg := range strings.Split(cur, "/") {
			seg, _, _ = strings.Cut(seg, ";")
			if seg == "." || seg == ".." {
				return nil, invalid("must not hold . or .. segments; it may not leave base_url")
			}
			if strings.IndexFunc(seg, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
				return nil, invalid("must not hold control characters")
			}
		}
		next, err := url.PathUnescape(cur)
		if err != nil || next == cur {
			break
		}
		cur = next
	}

	basePath := strings.TrimSuffix(base.EscapedPath(), "/")
	full := base.Scheme + "://" + base.Host + base.EscapedPath()
	if rel := strings.TrimPrefix(escapePath(path), "/"); rel != "" {
		full = base.Scheme + "://" + base.Host + basePath + "/" + rel
	}
	u, err := url.Parse(full)
	if err != nil {
		return nil, invalid("%v", stripURLErr(err))
	}
	if u.Scheme != base.Scheme || u.Host != base.Host || u.User != nil ||
		(u.EscapedPath() != base.EscapedPath() && !strings.HasPrefix(u.EscapedPath(), basePath+"/")) {
		return nil, invalid("leaves base_url")
	}
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, invalid("invalid query: %v", err)
	}
	for k, v := range query {
		values.Add(k, v)
	}
	u.RawQuery = values.Encode()
	return u, nil
}

// escapePath percent-encodes the bytes a path may not hold as they are,
// keeping existing escapes (already checked to be valid).
func escapePath(p string) string {
	const keep = "-._~!$&'()*+,;=:@/%"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// execute sends req and reads its answer: a *Response for a status below
// 400, else a canonical *legate.Error. The body is decoded (gzip,
// deflate) before anything reads it, so that the secrets are masked in
// what a client will see, not in compressed bytes.
func execute(ctx context.Context, client *http.Client, req *http.Request, limit int, secrets *legate.Secrets) (*Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, transportError(ctx, err, client.Timeout)
	}
	defer resp.Body.Close()
	decErr := connectors.DecodeBody(resp)
	if resp.StatusCode >= 400 {
		var head []byte
		if decErr == nil {
			head, _ = io.ReadAll(io.LimitReader(resp.Body, snippetBytes+utf8.UTFMax))
		}
		return nil, statusError(resp, snip(secrets.Mask(head, true), resp.Header.Get("Content-Type")))
	}
	if decErr != nil {
		return nil, &legate.Error{Code: legate.CodeAdapterMapping, Err: decErr,
			Message: fmt.Sprintf("http: the body's content encoding %q cannot be decoded to check it for credentials; it is withheld", resp.Header.Get("Content-Encoding"))}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, transportError(ctx, err, client.Timeout)
	}
	truncated := len(body) > limit
	if truncated {
		body = body[:limit]
	}
	body = secrets.Mask(body, truncated)
	out := &Response{Status: resp.StatusCode, Headers: map[string]string{}, Truncated: truncated}
	for k, vs := range resp.Header {
		if k == "Set-Cookie" || len(vs) == 0 {
			continue
		}
		out.Headers[strings.ToLower(k)] = secrets.MaskString(vs[0])
	}
	if textual(resp.Header.Get("Content-Type"), body, truncated) {
		if truncated {
			body = cutIncompleteRune(body)
		}
		out.Body = string(body)
	} else if compressedSecret(body, limit, secrets) {
		return nil, legate.Errorf(legate.CodeAdapterMapping, "http: the body is compressed data that holds a credential; it is withheld")
	} else {
		out.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	}
	out.Size = len(body)
	return out, nil
}

// textual reports whether a body of that content type is returned as text:
// a textual media type (or none) and valid UTF-8.
func textual(contentType string, body []byte, truncated bool) bool {
	if truncated {
		body = cutIncompleteRune(body)
	}
	if !utf8.Valid(body) {
		return false
	}
	if contentType == "" {
		return !bytes.ContainsFunc(body, func(r rune) bool {
			return r < ' ' && r != '\n' && r != '\r' && r != '\t'
		})
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(contentType), ";")
		mt = strings.TrimSpace(mt)
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/yaml", "application/x-yaml", "application/toml",
		"application/graphql", "application/x-ndjson", "application/jsonl", "application/csv", "application/sql":
		return true
	}
	return false
}

// cutIncompleteRune drops a multi-byte rune cut in half at the end of b.
func cutIncompleteRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

const snippetBytes = 512

// snip returns a one-line excerpt of an error body, or "" when the body is
// not text.
func snip(body []byte, contentType string) string {
	truncated := len(body) > snippetBytes
	if truncated {
		body = cutIncompleteRune(body[:snippetBytes])
	}
	if !textual(contentType, body, false) {
		return ""
	}
	s := strings.Join(strings.Fields(string(body)), " ")
	if truncated {
		s += " …"
	}
	return s
}

// statusError maps an HTTP failure status to a canonical error. A status
// the gateway cannot act on otherwise (400, 405, 422, ...) is
// INVALID_ARGUMENT: the call as made will not succeed.
func statusError(resp *http.Response, snippet string) *legate.Error {
	status := resp.StatusCode
	msg := fmt.Sprintf("http: server answered %d %s", status, http.StatusText(status))
	if snippet != "" {
		msg += ": " + snippet
	}
	e := &legate.Error{Message: msg}
	switch {
	case status == http.StatusUnauthorized:
		e.Code = legate.CodeAuthExpired
	case status == http.StatusForbidden:
		e.Code = legate.CodePermissionDenied
	case status == http.StatusNotFound || status == http.StatusGone:
		e.Code = legate.CodeNotFound
	case status == http.StatusConflict || status == http.StatusPreconditionFailed:
		e.Code = legate.CodeConflict
	case status == http.StatusTooManyRequests:
		e.Code = legate.CodeRateLimited
		e.RetryAfter, _ = netguard.RetryAfter(resp.Header, time.Now())
	case status == http.StatusRequestTimeout || status >= 500:
		e.Code = legate.CodeTransient
	default:
		e.Code = legate.CodeInvalidArgument
	}
	return e
}

// transportError maps a failure to get an answer: a refused address is
// PERMISSION_DENIED, a deadline TIMEOUT, anything else on the network
// TRANSIENT.
func transportError(ctx context.Context, err error, timeout time.Duration) *legate.Error {
	var ne net.Error
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		var be *netguard.BlockedError
		msg := "http: address refused; set allow_private_networks: true to allow private networks"
		if errors.As(err, &be) {
			msg = "http: " + be.Error()
		}
		return &legate.Error{Code: legate.CodePermissionDenied, Message: msg, Err: err}
	case errors.Is(err, netguard.ErrTooManyRedirects):
		return &legate.Error{Code: legate.CodeAdapterMapping, Message: "http: " + stripURLErr(err).Error(), Err: err}
	case errors.Is(ctx.Err(), context.Canceled):
		return &legate.Error{Code: legate.CodeTransient, Message: "http: request cancelled", Err: err}
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		msg := "http: request timed out"
		if timeout > 0 && ctx.Err() == nil {
			msg = fmt.Sprintf("http: request timed out after %s", timeout)
		}
		return &legate.Error{Code: legate.CodeTimeout, Message: msg, Err: err}
	}
	return &legate.Error{Code: legate.CodeTransient, Message: "http: request failed: " + stripURLErr(err).Error(), Err: err}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
