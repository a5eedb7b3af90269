package saas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
)

// StatusError is the canonical error of a provider answer with an HTTP
// status the call does not accept, whatever client library reported it:
// 401 AUTH_EXPIRED, 403 PERMISSION_DENIED, 404 and 410 NOT_FOUND, 409 and
// 412 CONFLICT, 429 RATE_LIMITED with retryAfter, 408, 425 and 5xx
// TRANSIENT, another 4xx INVALID_ARGUMENT, below 400 ADAPTER_MAPPING_ERROR
// (see httpkit.StatusCode). The message is provider, ": " and msg; msg
// must hold no secret.
//
// An SDK-based connector maps its library's error type with one call:
//
//	var se *slack.StatusCodeError
//	if errors.As(err, &se) {
//		return saas.StatusError("slack", se.Code, 0, se.Status)
//	}
func StatusError(provider string, status int, retryAfter time.Duration, msg string) *legate.Error {
	e := &legate.Error{Code: httpkit.StatusCode(status), Message: provider + ": " + msg}
	if e.Code == legate.CodeRateLimited {
		e.RetryAfter = retryAfter
	}
	return e
}

// RateLimited is the error of a provider that refused a call for its rate
// limit (an SDK's own rate-limit error), to retry after retryAfter (0 if
// it did not say).
func RateLimited(provider string, retryAfter time.Duration) *legate.Error {
	return &legate.Error{Code: legate.CodeRateLimited, RetryAfter: retryAfter, Message: provider + ": rate limited by the provider"}
}

// Mapping is the error of an answer the connector cannot read (a missing
// field, an unknown shape): ADAPTER_MAPPING_ERROR, a bug to report, never
// retried.
func Mapping(provider, format string, args ...any) *legate.Error {
	return &legate.Error{Code: legate.CodeAdapterMapping, Message: provider + ": unexpected answer: " + fmt.Sprintf(format, args...)}
}

// Classify returns err as a canonical error, for what a connector's own
// mapping did not recognise. An error with a code keeps it; a JSON body
// that did not decode is ADAPTER_MAPPING_ERROR; everything else is a
// failure to get an answer, mapped by httpkit.TransportError (TIMEOUT,
// TRANSIENT, PERMISSION_DENIED for a refused address). ctx is the attempt's
// context, to tell a deadline from a cancellation.
func Classify(ctx context.Context, err error, provider string) *legate.Error {
	var le *legate.Error
	if errors.As(err, &le) {
		return le
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) {
		return &legate.Error{Code: legate.CodeAdapterMapping, Message: provider + ": unexpected answer: " + err.Error(), Err: err}
	}
	return httpkit.TransportError(ctx, err, provider)
}
