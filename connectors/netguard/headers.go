package netguard

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter parses the Retry-After header of a response: delay-seconds or
// an HTTP date (relative to now). ok is false when the header is absent or
// unparsable; a date in the past gives 0, true.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ValidHeaderName reports whether name is an HTTP field name (an RFC 9110
// token).
func ValidHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ValidHeaderValue reports whether v may be sent as a field value: no
// control characters other than horizontal tab (so no CR, LF or NUL that
// could split a header).
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// reserved are the fields the transport manages or that are hop-by-hop.
var reserved = map[string]bool{
	// The transport asks for the codings it decodes: a body in a coding
	// it did not ask for would reach the caller undecoded, and unmasked.
	"Accept-Encoding":     true,
	"Connection":          true,
	"Content-Length":      true,
	"Host":                true,
	"Keep-Alive":          true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Proxy-Connection":    true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// ReservedHeader reports whether name is managed by the transport or is a
// hop-by-hop field, and so must be set neither by configuration nor by a
// model. Credential fields (Authorization, Cookie) are the connector's to
// refuse: it knows where its credentials go.
func ReservedHeader(name string) bool {
	return reserved[http.CanonicalHeaderKey(name)]
}
