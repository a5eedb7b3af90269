package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/store"
)

// wantError checks that w is an error of the API's one format, with the
// code of its status.
func wantError(t *testing.T, what string, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if w.Code != status {
		t.Errorf("%s: status %d, want %d: %s", what, w.Code, status, w.Body)
		return
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Code != code || body.Error.Message == "" {
		t.Errorf("%s: body %s (%v); want code %s and a message", what, w.Body, err, code)
	}
}

// failing is an Ops whose store fails.
type failing struct{ inbox }

func (failing) ListApprovals(context.Context, store.ApprovalFilter) ([]*store.Approval, error) {
	return nil, errors.New("the store is down")
}

func (failing) Approval(context.Context, string) (*store.Approval, error) {
	return nil, errors.New("the store is down")
}

// Every route answers its errors as {"error": {"code", "message"}} with
// the status's code: without a token, with a method it does not take,
// for a request that does not exist, and when the store fails; so do
// routes that do not exist.
func TestEveryRouteAnswersJSONErrors(t *testing.T) {
	in := newInbox()
	// A request of the principal that decides as the admin token.
	in.m["mine"] = &store.Approval{ID: "mine", State: store.StatePending, Tool: "web.post", Principal: "admin", Args: json.RawMessage(`{}`)}
	h := admin.Handler(in, &admin.Options{Token: "right"})
	broken := admin.Handler(&failing{}, &admin.Options{Token: "right"})
	patterns := admin.RoutePatterns()
	if len(patterns) == 0 {
		t.Fatal("no routes")
	}
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		path = strings.NewReplacer("{id}", "nope", "{verb}", "approve", "{name}", "nope").Replace(path)
		wantError(t, p+" without a token", do(h, method, path, "", ""), http.StatusUnauthorized, admin.CodeUnauthenticated)
		wantError(t, p+" with a wrong token", do(h, method, path, "wrong", ""), http.StatusUnauthorized, admin.CodeUnauthenticated)
		wantError(t, p+" with the API off", do(admin.Handler(newInbox(), nil), method, path, "x", ""), http.StatusForbidden, admin.CodePermissionDenied)
		other := "PATCH" // no route takes PATCH
		w := do(h, other, path, "right", "")
		wantError(t, p+" by "+other, w, http.StatusMethodNotAllowed, admin.CodeMethodNotAllowed)
		if !strings.Contains(w.Header().Get("Allow"), method) {
			t.Errorf("%s by %s: Allow %q", p, other, w.Header().Get("Allow"))
		}
		if strings.Contains(p, "{id}") {
			wantError(t, p+" of a request that does not exist", do(h, method, path, "right", ""), http.StatusNotFound, admin.CodeNotFound)
		}
		if strings.Contains(p, "approvals") {
			wantError(t, p+" with the store down", do(broken, method, path, "right", ""), http.StatusInternalServerError, admin.CodeInternal)
		}
	}
	for _, path := range []string{"/admin/", "/admin/v1/", "/admin/v1/nope", "/admin/v2/approvals", "/admin/v1/approvals/a1/approve/now"} {
		wantError(t, "GET "+path, do(h, "GET", path, "right", ""), http.StatusNotFound, admin.CodeNotFound)
	}
	for name, tc := range map[string]struct {
		method, path, body string
		status             int
		code               string
	}{
		"unknown state":   {"GET", "/admin/v1/approvals?state=bogus", "", http.StatusBadRequest, admin.CodeInvalidArgument},
		"bad limit":       {"GET", "/admin/v1/approvals?limit=many", "", http.StatusBadRequest, admin.CodeInvalidArgument},
		"zero limit":      {"GET", "/admin/v1/approvals?limit=0", "", http.StatusBadRequest, admin.CodeInvalidArgument},
		"unknown verb":    {"POST", "/admin/v1/approvals/a1/maybe", "", http.StatusNotFound, admin.CodeNotFound},
		"body not JSON":   {"POST", "/admin/v1/approvals/a1/approve", "yes", http.StatusBadRequest, admin.CodeInvalidArgument},
		"body too large":  {"POST", "/admin/v1/approvals/a1/approve", `{"reason":"` + strings.Repeat("x", 70<<10) + `"}`, http.StatusRequestEntityTooLarge, admin.CodeTooLarge},
		"decided already": {"POST", "/admin/v1/approvals/a2/deny", "", http.StatusConflict, admin.CodeConflict},
		"self approval":   {"POST", "/admin/v1/approvals/mine/approve", "", http.StatusConflict, admin.CodeConflict},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer right")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		wantError(t, name, w, tc.status, tc.code)
	}
}

// The client returns the API's error with its code and message; a
// refused token is named with where it came from and what it must be.
func TestClientSurfacesCodeAndMessage(t *testing.T) {
	h := admin.Handler(newInbox(), &admin.Options{Token: "right"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	t.Setenv(admin.AdminTokenEnv, "wrong-from-env")
	for name, tc := range map[string]struct {
		token, from string
		status      int
		code        string
		msg, text   string
	}{
		"no token": {"", "", http.StatusUnauthorized, admin.CodeUnauthenticated, "missing or wrong admin token",
			"the server at " + srv.URL + "/admin/v1/status asks for an admin token and none was sent (401 UNAUTHENTICATED: missing or wrong admin token): set LEGATE_ADMIN_TOKEN to the token the server was started with"},
		"wrong token": {"wrong", "", http.StatusUnauthorized, admin.CodeUnauthenticated, "missing or wrong admin token",
			"the server at " + srv.URL + "/admin/v1/status refused the admin token from --token (401 UNAUTHENTICATED: missing or wrong admin token): set LEGATE_ADMIN_TOKEN to the token the server was started with"},
		"wrong token from the environment": {"wrong-from-env", "", http.StatusUnauthorized, admin.CodeUnauthenticated, "missing or wrong admin token",
			"refused the admin token from LEGATE_ADMIN_TOKEN (401"},
		"named source": {"wrong", "LEGATE_OTHER", http.StatusUnauthorized, admin.CodeUnauthenticated, "missing or wrong admin token",
			"refused the admin token from LEGATE_OTHER (401"},
		"no status": {"right", "", http.StatusNotFound, admin.CodeNotFound, "this server reports no status",
			srv.URL + "/admin/v1/status answered 404 NOT_FOUND"},
	} {
		_, err := (&admin.Client{URL: srv.URL + "/mcp", Token: tc.token, TokenFrom: tc.from}).Status(t.Context())
		var e *admin.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %q\nwant it to say %q", name, err, tc.text)
		}
	}
	// A 403 says what the admin token is.
	off := httptest.NewServer(admin.Handler(newInbox(), &admin.Options{}))
	defer off.Close()
	_, err := (&admin.Client{URL: off.URL, Token: "any"}).Status(t.Context())
	if err == nil || !strings.Contains(err.Error(), "refused the admin token from --token (403 PERMISSION_DENIED: the admin API is off") ||
		!strings.Contains(err.Error(), "LEGATE_ADMIN_TOKEN is the admin API's token") {
		t.Errorf("admin API off: %v", err)
	}
	// An answer not in the API's format (a proxy's page) keeps its text.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer proxy.Close()
	_, err = (&admin.Client{URL: proxy.URL}).Status(t.Context())
	var e *admin.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadGateway || e.Message != "bad gateway" || e.Code != admin.CodeInternal {
		t.Errorf("proxy: %v", err)
	}
}

// The authenticator's plain-text refusals in front of the API take its
// error format; JSON answers pass unchanged.
func TestJSONErrorsRewritesPlainRefusals(t *testing.T) {
	plain := admin.JSONErrors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "authentication required", http.StatusUnauthorized)
	}))
	w := do(plain, "GET", "/admin/v1/approvals", "", "")
	wantError(t, "plain 401", w, http.StatusUnauthorized, admin.CodeUnauthenticated)
	if !strings.Contains(w.Body.String(), "authentication required") || w.Header().Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("message or challenge lost: %s %v", w.Body, w.Header())
	}
	forbidden := admin.JSONErrors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden: needs the approver role", http.StatusForbidden)
	}))
	wantError(t, "plain 403", do(forbidden, "GET", "/admin/v1/approvals", "", ""), http.StatusForbidden, admin.CodePermissionDenied)
	api := admin.JSONErrors(admin.Handler(newInbox(), &admin.Options{Token: "right"}))
	wantError(t, "the API's own 404", do(api, "GET", "/admin/v1/approvals/nope", "right", ""), http.StatusNotFound, admin.CodeNotFound)
	if w := do(api, "GET", "/admin/v1/approvals/a1", "right", ""); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id": "a1"`) {
		t.Errorf("a success: %d %s", w.Code, w.Body)
	}
}
