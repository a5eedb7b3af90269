package admin

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The codes of the admin API's errors. Each HTTP status the API answers
// with has one code, stable for scripts; the message beside it is for
// people and may change.
const (
	CodeInvalidArgument  = "INVALID_ARGUMENT"   // 400: a malformed body, an unknown state, a bad limit
	CodeUnauthenticated  = "UNAUTHENTICATED"    // 401: no token, or a wrong one
	CodePermissionDenied = "PERMISSION_DENIED"  // 403: the API is off, or the caller's role or tenant does not reach
	CodeNotFound         = "NOT_FOUND"          // 404: no such route or request
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED" // 405: the route exists; the Allow header lists its methods
	CodeConflict         = "CONFLICT"           // 409: decided already, or an approver deciding their own request
	CodeTooLarge         = "PAYLOAD_TOO_LARGE"  // 413: a body over the limit
	CodeInternal         = "INTERNAL"           // 500: the server failed; the message says how
)

// codeOf is the code of an HTTP status.
func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return CodeInvalidArgument
	case http.StatusUnauthorized:
		return CodeUnauthenticated
	case http.StatusForbidden:
		return CodePermissionDenied
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusConflict:
		return CodeConflict
	case http.StatusRequestEntityTooLarge:
		return CodeTooLarge
	}
	return CodeInternal
}

// Error is an error answer of the admin API, whose body is
// {"error": {"code": "NOT_FOUND", "message": "..."}}. A [Client] returns
// it (errors.As) for any answer that is not a success.
type Error struct {
	// Status is the HTTP status of the answer.
	Status int `json:"-"`
	// Code is one of the Code constants: what a script tests.
	Code string `json:"code"`
	// Message says what went wrong, for people.
	Message string `json:"message"`
	// URL is the URL asked, set by a Client.
	URL string `json:"-"`
	// refused is, for a 401 or 403 a Client got, what the server refused
	// and how to fix it (Client.refusal).
	refused *refusal
}

// refusal says of a 401 or 403 which token was refused and what it must be.
type refusal struct{ what, fix string }

func (e *Error) Error() string {
	msg := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if r := e.refused; r != nil {
		return fmt.Sprintf("the server at %s %s (%s): %s", e.URL, r.what, msg, r.fix)
	}
	if e.URL != "" {
		msg = e.URL + " answered " + msg
	}
	return msg
}

// writeJSONError answers with status and an Error of its code.
func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]*Error{"error": {Code: codeOf(status), Message: msg}})
}

// bodyError answers a body that could not be read: too large (413) or not
// what the route takes (400, with want).
func bodyError(w http.ResponseWriter, err error, want string) {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		writeJSONError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", mbe.Limit))
		return
	}
	writeJSONError(w, http.StatusBadRequest, "body must be JSON: "+want)
}

// jsonErrors answers, in the API's error format, what mux answers for a
// request that matches no route: 404, or 405 with the Allow header for a
// route that takes other methods. Requests that match a route go through.
func jsonErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &statusOnly{header: http.Header{}}
		mux.ServeHTTP(rec, r)
		switch rec.status {
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", rec.header.Get("Allow"))
			writeJSONError(w, rec.status, fmt.Sprintf("%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, rec.header.Get("Allow")))
		case http.StatusNotFound, 0:
			writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no admin API route %s %s", r.Method, r.URL.Path))
		default: // a redirect to the canonical path
			for k, v := range rec.header {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.status)
		}
	})
}

// statusOnly records the status and headers mux answers with, not its
// plain-text body.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return len(b), nil
}
func (s *statusOnly) WriteHeader(status int) { s.status = status }

// JSONErrors gives the errors of the handlers in front of the API (the
// authenticator's 401 and 403, written as plain text) the API's error
// format, their text as the message, so that every error under
// /admin/v1/ has one shape. Answers in JSON pass as they are.
func JSONErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw := &plainErrors{ResponseWriter: w}
		h.ServeHTTP(pw, r)
		if pw.status != 0 {
			writeJSONError(w, pw.status, strings.TrimSpace(string(pw.body)))
		}
	})
}

// plainErrors holds back an error answer that is not JSON, for JSONErrors
// to write again.
type plainErrors struct {
	http.ResponseWriter
	status int // the error held back; 0 when none
	body   []byte
}

func (p *plainErrors) WriteHeader(code int) {
	if code >= 400 && !strings.HasPrefix(p.Header().Get("Content-Type"), "application/json") {
		p.status = code
		return
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *plainErrors) Write(b []byte) (int, error) {
	if p.status != 0 {
		p.body = append(p.body, b...)
		return len(b), nil
	}
	return p.ResponseWriter.Write(b)
}

func (p *plainErrors) Unwrap() http.ResponseWriter { return p.ResponseWriter }

var (
	_ http.ResponseWriter = (*statusOnly)(nil)
	_ http.ResponseWriter = (*plainErrors)(nil)
)
