package httpkit

import (
	"net/http"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// statusCodes are the statuses with a code of their own; every other
// failure status is INVALID_ARGUMENT below 500 and TRANSIENT from 500.
var statusCodes = map[int]legate.Code{
	http.StatusUnauthorized:       legate.CodeAuthExpired,
	http.StatusForbidden:          legate.CodePermissionDenied,
	http.StatusNotFound:           legate.CodeNotFound,
	http.StatusGone:               legate.CodeNotFound,
	http.StatusConflict:           legate.CodeConflict,
	http.StatusPreconditionFailed: legate.CodeConflict,
	http.StatusTooManyRequests:    legate.CodeRateLimited,
	// The server did not process the request and says a later one may
	// succeed: 425 Too Early (RFC 8470) asks for a retry.
	http.StatusRequestTimeout: legate.CodeTransient,
	http.StatusTooEarly:       legate.CodeTransient,
}

// StatusCode returns the canonical code of an answer with that status that
// the caller does not accept as success. Below 400 it is
// ADAPTER_MAPPING_ERROR (an answer the connector was not written for, such
// as a redirect it does not follow); a 4xx without its own code is
// INVALID_ARGUMENT, since the call as made will not succeed; 5xx is
// TRANSIENT.
func StatusCode(status int) legate.Code {
	if c, ok := statusCodes[status]; ok {
		return c
	}
	switch {
	case status < 400:
		return legate.CodeAdapterMapping
	case status < 500:
		return legate.CodeInvalidArgument
	}
	return legate.CodeTransient
}

// StatusError returns the canonical error of resp with message msg: its
// code from [StatusCode] and, for 429, the wait its Retry-After asks.
func StatusError(resp *http.Response, msg string) *legate.Error {
	e := &legate.Error{Code: StatusCode(resp.StatusCode), Message: msg}
	if e.Code == legate.CodeRateLimited {
		e.RetryAfter, _ = netguard.RetryAfter(resp.Header, time.Now())
	}
	return e
}

// RetryableStatus reports whether an answer with that status may succeed
// if sent again: 408, 425, 429 and 5xx, except 501 Not Implemented and 505
// HTTP Version Not Supported, which will not change.
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return status >= 500
}

// unprocessed reports whether a status says the server refused the request
// before doing any of its work, so that even a write may be sent again:
// 408 (the request was not read in time), 425 (RFC 8470: not processed)
// and 429 (refused by a rate limit).
func unprocessed(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return false
}
