package notion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

func TestRateLimitIsWaitedThenSucceeds(t *testing.T) {
	s := newStandin(t)
	workspace(s, 3, 0)
	in := build(t, s, "notion", "")
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
	var retried []string
	s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
		if op == "query" && n == 1 {
			w.Header().Set("Retry-After", "1")
			fail(w, 429, "rate_limited", "You have been rate limited. Please try again in a few minutes.")
			return true
		}
		return false
	}
	res, err := in.tool(t, "query_database").Run(context.Background(), &connectors.Call{
		Tool: "query_database", Args: json.RawMessage(fmt.Sprintf(`{"database":%q}`, dbRef)), Caller: connectors.Caller{Tenant: "t1"},
		Credentials: connectortest.Creds{"token": token}, Key: func() []byte { return in.key },
		Retried: func(reason string) { retried = append(retried, reason) },
	})
	l := decode[saas.List[model.Page]](t, outcome{res, err})
	if len(l.Items) != 3 || s.count("query") != 2 || strings.Join(retried, ",") != "429" {
		t.Fatalf("%d items after %d requests, retries %v", len(l.Items), s.count("query"), retried)
	}

	t.Run("a wait past max_retry_wait is returned", func(t *testing.T) {
		s := newStandin(t)
		in := build(t, s, "notion", "")
		s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "3600")
			fail(w, 429, "rate_limited", "slow down")
			return true
		}
		_, err := in.call(t, "t1", "search", `{}`, "")
		if le := wantCode(t, err, legate.CodeRateLimited); le.RetryAfter != time.Hour || s.count("search") != 1 {
			t.Errorf("RetryAfter %v after %d requests", le.RetryAfter, s.count("search"))
		}
	})

	t.Run("a write's body is sent whole again", func(t *testing.T) {
		s := newStandin(t)
		workspace(s, 0, 1)
		in := build(t, s, "notion", "")
		ref := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"note"}`, "")).Items[0].Ref
		s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
			if op == "append" && n == 1 {
				w.Header().Set("Retry-After", "0")
				fail(w, 429, "rate_limited", "slow down")
				return true
			}
			return false
		}
		bl := decode[model.Block](t, in.do(t, "t1", "append_block", fmt.Sprintf(`{"parent":%q,"text":"after the limit"}`, ref), "op-rl"))
		if bl.Text != "after the limit" || s.count("append") != 2 || s.writeCount() != 1 {
			t.Fatalf("block %+v after %d appends, %d writes", bl, s.count("append"), s.writeCount())
		}
	})
}

func TestFailuresMapToTheirClass(t *testing.T) {
	status := func(code int, notionCode string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { fail(w, code, notionCode, "refused "+token) }
	}
	body := func(ct, b string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { w.Header().Set("Content-Type", ct); w.Write([]byte(b)) }
	}
	tests := map[string]struct {
		answer   func(w http.ResponseWriter)
		code     legate.Code
		attempts int
	}{
		"401":            {status(401, "unauthorized"), legate.CodeAuthExpired, 1},
		"403":            {status(403, "restricted_resource"), legate.CodePermissionDenied, 1},
		"404":            {status(404, "object_not_found"), legate.CodeNotFound, 1},
		"409":            {status(409, "conflict_error"), legate.CodeConflict, 1},
		"400":            {status(400, "validation_error"), legate.CodeInvalidArgument, 1},
		"500":            {status(500, "internal_server_error"), legate.CodeTransient, 3},
		"503":            {status(503, "service_unavailable"), legate.CodeTransient, 3},
		"529 overloaded": {status(529, "service_unavailable"), legate.CodeTransient, 3},
		"502 html": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			w.Write([]byte("<html>bad gateway</html>"))
		}, legate.CodeTransient, 3},
		"malformed body":  {body("application/json", `<html>oops</html>`), legate.CodeAdapterMapping, 1},
		"wrong shape":     {body("application/json", `{"results":{"a":1}}`), legate.CodeAdapterMapping, 1},
		"not an object":   {body("application/json", `{"object":"list","results":[1]}`), legate.CodeAdapterMapping, 1},
		"unknown object":  {body("application/json", `{"object":"list","results":[{"object":"block","id":"x"}]}`), legate.CodeAdapterMapping, 1},
		"page without id": {body("application/json", `{"object":"list","results":[{"object":"page","properties":{}}]}`), legate.CodeAdapterMapping, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			in := build(t, s, "notion", "")
			s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
				tc.answer(w)
				return true
			}
			res, err := in.call(t, "t1", "search", `{}`, "")
			le := wantCode(t, err, tc.code)
			if n := s.count("search"); n != tc.attempts {
				t.Errorf("%d requests; want %d", n, tc.attempts)
			}
			if !strings.HasPrefix(le.Message, "notion: ") {
				t.Errorf("message %q", le.Message)
			}
			noToken(t, res, err)
		})
	}
}

func noToken(t *testing.T, res *legate.Result, err error, more ...string) {
	t.Helper()
	parts := more
	if res != nil {
		b, _ := json.Marshal(res.Structured)
		parts = append(parts, string(b), res.Text)
	}
	if err != nil {
		parts = append(parts, err.Error())
		var le *legate.Error
		if errors.As(err, &le) {
			b, _ := json.Marshal(le.Details)
			parts = append(parts, le.Message, string(b))
			if le.Err != nil {
				parts = append(parts, le.Err.Error())
			}
		}
	}
	for _, p := range parts {
		if strings.Contains(p, "5d2e8f1a9c3b") {
			t.Fatalf("the token shows in %q", p)
		}
	}
}

// The token never shows in a result, an error, the connection test's
// report or the log (notionapi logs through the standard logger).
func TestTokenNeverShows(t *testing.T) {
	var logged bytes.Buffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	s := newStandin(t)
	workspace(s, 2, 2)
	in := build(t, s, "notion", "")
	dbRef := decode[saas.List[model.Database]](t, in.do(t, "t1", "search", `{"object":"database"}`, "")).Items[0].Ref
	pgRef := decode[saas.List[model.Page]](t, in.do(t, "t1", "search", `{"query":"note 0"}`, "")).Items[0].Ref
	for _, tc := range []struct{ tool, args string }{
		{"search", `{}`},
		{"query_database", fmt.Sprintf(`{"database":%q}`, dbRef)},
		{"create_page", fmt.Sprintf(`{"parent":%q,"title":"t"}`, dbRef)},
		{"append_block", fmt.Sprintf(`{"parent":%q,"text":"t"}`, pgRef)},
	} {
		res, err := in.call(t, "t1", tc.tool, tc.args, "op-"+tc.tool)
		if err != nil {
			t.Fatal(err)
		}
		noToken(t, res, err)
	}
	// Failures echoing the token, and a bad token.
	s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
		fail(w, 400, "validation_error", "bad header "+r.Header.Get("Authorization"))
		return true
	}
	res, err := in.call(t, "t1", "search", `{}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	noToken(t, res, err)
	s.fault = nil
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	err = in.c.Test(ctx, connectortest.Creds{"token": token})
	if err != nil {
		t.Fatal(err)
	}
	noToken(t, nil, err, strings.Join(lines, "\n"), logged.String())
}

func TestConnectionTestReports(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "notion", "")
	report := func(tok string) (string, error) {
		var lines []string
		ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
		err := in.c.Test(ctx, connectortest.Creds{"token": tok})
		return strings.Join(lines, "\n"), err
	}
	out, err := report(token)
	for _, want := range []string{"Notion-Version 2025-09-03", "GET /v1/users/me: ok, bot Legate in workspace Acme (id b0700000-0000-4000-8000-000000000001)", "no page is shared", "Insert content"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("report lacks %q (error %v):\n%s", want, err, out)
		}
	}
	workspace(s, 0, 1)
	if out, err = report(token); err != nil || !strings.Contains(out, "POST /v1/search: ok, pages are shared") {
		t.Errorf("%v\n%s", err, out)
	}
	out, err = report("ntn_wrong")
	wantCode(t, err, legate.CodeAuthExpired)
	if !strings.Contains(out, "notion: Notion answered 401 unauthorized") {
		t.Errorf("report:\n%s", out)
	}
}

// Every tool's structured result matches the output schema it declares
// (clients check it); search's items are page.v1 or database.v1.
