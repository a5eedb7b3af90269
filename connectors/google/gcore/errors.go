package gcore

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// MaxAnswerBytes bounds the body of one API answer: a range read whole
// (a sheet by its name, a named range), a file's content, can be large.
// Tests lower it.
var MaxAnswerBytes int64 = 32 << 20

// capped is a transport whose answers' bodies fail past MaxAnswerBytes.
type capped struct{ base http.RoundTripper }

func (c capped) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: MaxAnswerBytes}
	}
	return resp, err
}

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more tells a body that goes on from the end
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return 0, legate.Errorf(legate.CodeInvalidArgument, "google: the answer passed %d MiB; ask for less (a smaller range or limit)", MaxAnswerBytes>>20)
	}
	return n, err
}

var oauthCode = regexp.MustCompile(`^[a-z_]{1,40}$`)

// tokenError makes an error of the token endpoint canonical: a refused
// grant or client is AUTH_EXPIRED (the account must be connected again),
// a refused scope PERMISSION_DENIED, 429 RATE_LIMITED, 5xx TRANSIENT.
func tokenError(ctx context.Context, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil {
		if m := err.Error(); strings.Contains(m, "oauth2: cannot parse") || strings.Contains(m, "missing access_token") {
			return saas.Mapping("google", "the token endpoint's answer is not JSON")
		}
		return saas.Classify(ctx, err, "google")
	}
	status := re.Response.StatusCode
	msg := "the token endpoint answered " + strconv.Itoa(status)
	if oauthCode.MatchString(re.ErrorCode) { // an OAuth error code, nothing the endpoint echoed
		msg += " " + re.ErrorCode
	}
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		wait, _ := netguard.RetryAfter(re.Response.Header, time.Now())
		return saas.StatusError("google", status, wait, msg)
	case re.ErrorCode == "invalid_scope":
		return &legate.Error{Code: legate.CodePermissionDenied, Message: "google: " + msg + ": the refresh token was not granted the scopes asked"}
	}
	return &legate.Error{Code: legate.CodeAuthExpired, Message: "google: " + msg + ": the credential was refused; connect the account again (a new refresh token) or check client_id and client_secret, or the service account key, its domain-wide delegation and subject"}
}

// Reasons Google gives a 403 for a rate limit (Drive, in errors[].reason)
// and for one in the newer format (ErrorInfo.reason, status).
var rateReasons = []string{"userRateLimitExceeded", "rateLimitExceeded", "RATE_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED"}

// MapError makes an error of Google's client canonical; a canonical
// error is returned as it is. ctx is the attempt's. The message holds
// Google's code, status and reason, never its body.
func MapError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if le, ok := err.(*legate.Error); ok {
		return le
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return saas.Classify(ctx, err, "google")
	}
	reasons := reasonsOf(ge)
	msg := "Google answered " + strconv.Itoa(ge.Code)
	if len(reasons) > 0 {
		msg += " (" + strings.Join(reasons, ", ") + ")"
	}
	if ge.Message != "" {
		msg += ": " + ge.Message
	}
	wait, _ := netguard.RetryAfter(ge.Header, time.Now())
	if ge.Code == http.StatusForbidden {
		for _, r := range reasons {
			if slices.Contains(rateReasons, r) {
				return &legate.Error{Code: legate.CodeRateLimited, RetryAfter: wait, Message: "google: " + msg}
			}
		}
	}
	return saas.StatusError("google", ge.Code, wait, msg)
}

// IsNotFound reports whether err is Google's 404.
func IsNotFound(ctx context.Context, err error) bool {
	return legate.CodeOf(MapError(ctx, err)) == legate.CodeNotFound
}

// reasonsOf lists the reasons of ge: those of its errors (Drive) and of
// its details' ErrorInfo (Sheets), with its status.
func reasonsOf(ge *googleapi.Error) []string {
	var out []string
	add := func(s string) {
		if s != "" && len(out) < 4 && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, e := range ge.Errors {
		add(e.Reason)
	}
	for _, d := range ge.Details {
		if m, ok := d.(map[string]any); ok {
			if r, ok := m["reason"].(string); ok {
				add(r)
			}
		}
	}
	// The newer format's status is not parsed by googleapi: read the body.
	var body struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ge.Body), &body) == nil {
		add(body.Error.Status)
	}
	return out
}
