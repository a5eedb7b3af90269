package google_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

func TestExpiredAccessTokenIsRefreshedOnce(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(2)
	in := build(t, s, "google", "")
	for range 3 { // one exchange serves every call while the token is valid
		decode[page](t, in.do(t, "t1", "drive_list_files", `{}`, ""))
	}
	if s.requests("token") != 1 {
		t.Fatalf("%d token requests for 3 calls; want 1", s.requests("token"))
	}
	s.expireAll()
	var retries []string
	tool := toolNamed(t, in, "drive_get_file")
	res, err := tool.Run(context.Background(), &connectors.Call{Tool: tool.Name, Args: json.RawMessage(`{"file_id":"f00"}`),
		Credentials: creds, Caller: connectors.Caller{Tenant: "t1"}, Retried: func(r string) { retries = append(retries, r) }})
	if err != nil || res == nil {
		t.Fatalf("after the token expired: %v", err)
	}
	if s.requests("token") != 2 || s.requests("file") != 2 || strings.Join(retries, ",") != "auth" {
		t.Fatalf("%d token requests, %d API requests, retries %v; want 2, 2 (a 401, then success), auth", s.requests("token"), s.requests("file"), retries)
	}
	// The new token serves the next calls.
	decode[page](t, in.do(t, "t1", "drive_list_files", `{}`, ""))
	if s.requests("token") != 2 {
		t.Fatalf("%d token requests; want 2", s.requests("token"))
	}
}

func TestTokenEndpointFailures(t *testing.T) {
	tests := map[string]struct {
		answer func(w http.ResponseWriter)
		code   legate.Code
		tries  int
	}{
		"invalid_grant": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`))
		}, legate.CodeAuthExpired, 1},
		"invalid_scope": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_scope"}`))
		}, legate.CodePermissionDenied, 1},
		"500": {func(w http.ResponseWriter) { w.WriteHeader(500) }, legate.CodeTransient, 4},
		"not json": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`<html>`))
		}, legate.CodeAdapterMapping, 1},
		"no token": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"expires_in":3600}`))
		}, legate.CodeAdapterMapping, 1},
		"echoes creds": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":"%s %s"}`, clientSecret, refreshToken)
		}, legate.CodeAuthExpired, 1},
		"echoes creds as its code": {func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":"%s %s"}`, clientSecret, refreshToken)
		}, legate.CodeAuthExpired, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			in := build(t, s, "google", "")
			s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
				if op == "token" {
					tc.answer(w)
					return true
				}
				return false
			}
			res, err := in.call(t, "t1", "drive_list_files", `{}`, "")
			wantCode(t, err, tc.code)
			if s.requests("token") != tc.tries || s.requests("files") != 0 {
				t.Errorf("%d token requests, %d API requests; want %d, 0", s.requests("token"), s.requests("files"), tc.tries)
			}
			noSecret(t, res, err)
		})
	}
	t.Run("a wrong client secret", func(t *testing.T) {
		s := newStandin(t)
		in := build(t, s, "google", "")
		tool := toolNamed(t, in, "drive_list_files")
		_, err := tool.Run(context.Background(), &connectors.Call{Tool: tool.Name, Args: json.RawMessage(`{}`),
			Credentials: connectortest.Creds{"refresh_token": refreshToken, "client_secret": "GOCSPX-wrong"}})
		wantCode(t, err, legate.CodeAuthExpired)
		_, err = tool.Run(context.Background(), &connectors.Call{Tool: tool.Name, Args: json.RawMessage(`{}`),
			Credentials: connectortest.Creds{"refresh_token": refreshToken}})
		if le := wantCode(t, err, legate.CodeConfigError); !strings.Contains(le.Message, "client_secret") {
			t.Errorf("message %q does not name the credential", le.Message)
		}
	})
}

// Calls that find the access token expired together share one exchange.
func TestConcurrentCallsShareOneRefresh(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(2)
	in := build(t, s, "google", "")
	decode[page](t, in.do(t, "t1", "drive_list_files", `{}`, ""))
	s.expireAll()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			_, err := in.call(t, "t1", "drive_list_files", `{}`, "")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.requests("token"); n != 2 {
		t.Fatalf("%d token requests; want 2: the first, and one refresh shared by 16 calls", n)
	}
}

func TestConnectionTestReports(t *testing.T) {
	s := newStandin(t)
	s.seedFiles(1)
	in := build(t, s, "google", "")
	report := func(c connectors.Credentials) (string, error) {
		var lines []string
		ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
		err := in.c.Test(ctx, c)
		return strings.Join(lines, "\n"), err
	}
	out, err := report(creds)
	for _, want := range []string{
		"token refresh at " + s.srv.URL + "/token: ok, a new access token valid for",
		"scopes granted: https://www.googleapis.com/auth/drive https://www.googleapis.com/auth/spreadsheets",
		"tool sheets_append_row  ok      by the scope spreadsheets",
		"tool drive_list_files   ok      by the scope drive",
		"drive files.list: ok, 1 file(s)",
	} {
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("%v\n%s\nwant a line with %q", err, out, want)
		}
	}
	noSecret(t, &legate.Result{Text: out}, err)
	if s.requests("token") != 1 {
		t.Errorf("%d token requests", s.requests("token"))
	}
	s.scope = "https://www.googleapis.com/auth/spreadsheets.readonly https://www.googleapis.com/auth/drive.metadata.readonly"
	out, err = report(creds)
	wantCode(t, err, legate.CodePermissionDenied)
	if !strings.Contains(out, "tool sheets_append_row  MISSING") || !strings.Contains(out, "tool sheets_read_range  ok") {
		t.Errorf("report:\n%s", out)
	}
	out, err = report(connectortest.Creds{"refresh_token": "1//revoked", "client_secret": clientSecret})
	wantCode(t, err, legate.CodeAuthExpired)
	if !strings.Contains(out, "invalid_grant") {
		t.Errorf("report:\n%s", out)
	}
	// An endpoint echoing the credentials, even as its error code: the
	// report and the error hold none of them.
	s.fault = func(op string, n int, w http.ResponseWriter, r *http.Request) bool {
		if op == "token" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":"%s %s","error_description":"%s"}`, clientSecret, refreshToken, clientSecret)
			return true
		}
		return false
	}
	out, err = report(creds)
	wantCode(t, err, legate.CodeAuthExpired)
	noSecret(t, &legate.Result{Text: out}, err)
}
