package legate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Code is the canonical class of a failed call. A client sees it in the
// structured content of an error result and can act on it without knowing
// which system failed.
type Code string

// The codes a connector returns. Each says what the caller should do.
const (
	// CodeInvalidArgument: the arguments are wrong; fix them, do not retry as is.
	CodeInvalidArgument Code = "INVALID_ARGUMENT"
	// CodeAuthExpired: the provider refused the credential (expired or
	// revoked); an operator must renew it. A credential that cannot be
	// read at all is CodeConfigError.
	CodeAuthExpired Code = "AUTH_EXPIRED"
	// CodePermissionDenied: the credential works but may not do this.
	CodePermissionDenied Code = "PERMISSION_DENIED"
	// CodeNotFound: the object does not exist (or is not visible).
	CodeNotFound Code = "NOT_FOUND"
	// CodeConflict: the object changed or already exists; re-read, then decide.
	CodeConflict Code = "CONFLICT"
	// CodeRateLimited: retry after Error.RetryAfter.
	CodeRateLimited Code = "RATE_LIMITED"
	// CodeQuotaExceeded: a budget (the gateway's budgets:, an agent run's
	// tool calls) is spent; retry after Error.RetryAfter, when its window
	// ends (none for a run's).
	CodeQuotaExceeded Code = "QUOTA_EXCEEDED"
	// CodeTransient: a passing failure (5xx, network); a retry may succeed.
	CodeTransient Code = "TRANSIENT"
	// CodeAdapterMapping: the provider answered something the connector does
	// not understand; a bug to report, not to retry.
	CodeAdapterMapping Code = "ADAPTER_MAPPING_ERROR"
)

// The codes the gateway adds around connectors and upstreams.
const (
	CodePolicyDenied        Code = "POLICY_DENIED"
	CodeApprovalPending     Code = "APPROVAL_PENDING"
	CodeApprovalDenied      Code = "APPROVAL_DENIED"
	CodeUpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	CodeTimeout             Code = "TIMEOUT"
	// CodeNotConnected: the instance acts as each caller and the caller
	// has not connected it (or the connection expired): the caller
	// connects it (legate connect ID, or the connect URL in the error's
	// details) and calls again.
	CodeNotConnected Code = "NOT_CONNECTED"
	// CodeConfigError: the gateway's configuration keeps the call from
	// running (an unset credential variable, a missing secret file or
	// vault secret, a credential the instance does not configure): the
	// message names the setting; an operator must fix it, and a retry
	// fails the same way until then.
	CodeConfigError Code = "CONFIG_ERROR"
)

// Error is a call failure with its canonical code. Message must never hold a
// secret value.
type Error struct {
	Code       Code
	Message    string
	RetryAfter time.Duration // with CodeRateLimited, how long to wait; 0 if unknown
	// Details are extra fields for the client, beside code and message
	// (an approval id, when it expires).
	Details map[string]any
	Err     error // the underlying cause, for logs; never shown to clients
}

func (e *Error) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s: %s (retry after %s)", e.Code, e.Message, e.RetryAfter)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the canonical code of err: the code of the first *Error in
// its chain, CodeTimeout for a deadline, else CodeTransient.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return CodeTimeout
	}
	return CodeTransient
}

// FieldError is one invalid configuration field.
type FieldError struct {
	Field   string // the key path within the instance config, e.g. "base_url"
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Invalid returns a *FieldError for field.
func Invalid(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorMetaKey holds a gateway error's details (code, message, and such
// details as approval_id) in the _meta of every error result the gateway
// makes, whatever the tool. A tool without an output schema has them in
// structured content under "error" too; one with an output schema, whose
// structured content clients check against it, has them only here.
const ErrorMetaKey = "io.legate/error"

// IdempotencyMetaKey is the key of a tools/call's _meta under which a
// client gives its own idempotency key for the call's writes: a repeat of
// the call with the same key and the same arguments, by the same caller,
// is the same operation and returns the first outcome. The gateway
// derives a key for a call that repeats another of the same caller
// exactly within its repeat window.
const IdempotencyMetaKey = "io.legate/idempotency-key"
