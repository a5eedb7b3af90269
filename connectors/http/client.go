package httpconn

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/internal/contentcoding"
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
			return "", legate.Errorf(legate.CodeConfigError, "http: credential %s is not configured (auth: %s): add credentials.%s to the instance, or change its auth", name, c.cfg.Auth, name)
		}
		v, err := creds.Get(ctx, name)
		if err != nil {
			return "", connectors.CredentialError("http", name, err)
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
	if resp.StatusCode >= 400 {
		return nil, statusError(resp, httpkit.Snippet(resp, secrets))
	}
	if err := contentcoding.DecodeBody(resp); err != nil {
		return nil, &legate.Error{Code: legate.CodeAdapterMapping, Err: err,
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
	text := body
	if truncated { // a rune cut at the limit is not a reason to call it binary
		text = httpkit.TrimPartialRune(body)
	}
	if httpkit.IsText(resp.Header.Get("Content-Type"), text) {
		body = text
		out.Body = string(body)
	} else if compressedSecret(body, limit, secrets) {
		return nil, legate.Errorf(legate.CodeAdapterMapping, "http: the body is compressed data that holds a credential; it is withheld")
	} else {
		out.BodyBase64 = base64.StdEncoding.EncodeToString(body)
	}
	out.Size = len(body)
	return out, nil
}

// statusError is the canonical error of a failure status, naming the
// status and quoting the server's words.
func statusError(resp *http.Response, snippet string) *legate.Error {
	msg := fmt.Sprintf("http: server answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if snippet != "" {
		msg += ": " + snippet
	}
	return httpkit.StatusError(resp, msg)
}

// transportError maps a failure to get an answer, naming the instance's
// timeout when it is what ran out.
func transportError(ctx context.Context, err error, timeout time.Duration) *legate.Error {
	e := httpkit.TransportError(ctx, err, "http")
	if e.Code == legate.CodeTimeout && timeout > 0 && ctx.Err() == nil {
		e.Message = fmt.Sprintf("http: request timed out after %s", timeout)
	}
	return e
}
