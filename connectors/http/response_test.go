package httpconn_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/legate-mcp/legate"
	httpconn "github.com/legate-mcp/legate/connectors/http"
)

func TestCallStatuses(t *testing.T) {
	now := time.Now()
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/429":
			w.Header().Set("Retry-After", "7")
		case "/429date":
			w.Header().Set("Retry-After", now.Add(time.Minute).UTC().Format(http.TimeFormat))
		}
		code := map[string]int{
			"/400": 400, "/401": 401, "/403": 403, "/404": 404, "/405": 405, "/409": 409, "/410": 410,
			"/412": 412, "/422": 422, "/429": 429, "/429date": 429, "/408": 408, "/425": 425, "/500": 500, "/503": 503,
			"/304": 304, "/204": 204,
		}[r.URL.Path]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, `{"error":"field name is required","echo":"`+r.Header.Get("Authorization")+`"}`)
	})
	c := build(t, rec.srv.URL)
	tests := map[string]struct {
		path       string
		code       legate.Code
		retryAfter time.Duration
	}{
		"400":            {"400", legate.CodeInvalidArgument, 0},
		"401":            {"401", legate.CodeAuthExpired, 0},
		"403":            {"403", legate.CodePermissionDenied, 0},
		"404":            {"404", legate.CodeNotFound, 0},
		"405":            {"405", legate.CodeInvalidArgument, 0},
		"408":            {"408", legate.CodeTransient, 0},
		"409":            {"409", legate.CodeConflict, 0},
		"425 too early":  {"425", legate.CodeTransient, 0},
		"410":            {"410", legate.CodeNotFound, 0},
		"412":            {"412", legate.CodeConflict, 0},
		"422":            {"422", legate.CodeInvalidArgument, 0},
		"429 seconds":    {"429", legate.CodeRateLimited, 7 * time.Second},
		"429 date":       {"429date", legate.CodeRateLimited, time.Minute},
		"500":            {"500", legate.CodeTransient, 0},
		"503":            {"503", legate.CodeTransient, 0},
		"204 is success": {"204", "", 0},
		"304 is success": {"304", "", 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := callTool(t, c, `{"path":"`+tc.path+`"}`, map[string]string{"token": "tok-abcdef"})
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status != map[string]int{"204": 204, "304": 304}[tc.path] {
					t.Errorf("status %d", resp.Status)
				}
				return
			}
			ce := wantCode(t, err, tc.code)
			if tc.retryAfter > 0 && (ce.RetryAfter < tc.retryAfter-2*time.Second || ce.RetryAfter > tc.retryAfter) {
				t.Errorf("RetryAfter %v; want about %v", ce.RetryAfter, tc.retryAfter)
			}
			status := strings.TrimSuffix(tc.path, "date")
			if !strings.Contains(ce.Message, status) || !strings.Contains(ce.Message, "field name is required") {
				t.Errorf("message %q does not give the status and the server's words", ce.Message)
			}
			if strings.Contains(ce.Error(), "tok-abcdef") {
				t.Errorf("error holds the token: %v", ce)
			}
		})
	}
}

func TestCallResponseBodies(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/long":
			io.WriteString(w, strings.Repeat("x", 100))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		case "/utf8":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, strings.Repeat("é", 50))
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte{'c', 'a', 'f', 0xe9})
		case "/cookie":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cr3t"})
			io.WriteString(w, "ok")
		}
	})
	c := build(t, rec.srv.URL, "max_response_bytes: 11")
	tests := map[string]struct {
		path  string
		check func(t *testing.T, r *httpconn.Response)
	}{
		"truncated": {"long", func(t *testing.T, r *httpconn.Response) {
			if !r.Truncated || r.Size != 11 || r.Body != strings.Repeat("x", 11) {
				t.Errorf("%+v", r)
			}
		}},
		"binary": {"png", func(t *testing.T, r *httpconn.Response) {
			if r.Body != "" || r.BodyBase64 != "iVBORwABAgM=" || r.Truncated || r.Size != len(png) {
				t.Errorf("%+v", r)
			}
		}},
		"cut inside a rune": {"utf8", func(t *testing.T, r *httpconn.Response) {
			if !r.Truncated || r.Body != strings.Repeat("é", 5) || !utf8.ValidString(r.Body) || r.Size != 10 {
				t.Errorf("%+v", r)
			}
		}},
		"not utf-8": {"latin1", func(t *testing.T, r *httpconn.Response) {
			if r.Body != "" || r.BodyBase64 == "" {
				t.Errorf("%+v", r)
			}
		}},
		"set-cookie left out": {"cookie", func(t *testing.T, r *httpconn.Response) {
			if _, ok := r.Headers["set-cookie"]; ok {
				t.Errorf("headers %v", r.Headers)
			}
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := callTool(t, c, `{"path":"`+tc.path+`"}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, resp)
		})
	}
}

func TestCallTimeout(t *testing.T) {
	release := make(chan struct{})
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := build(t, rec.srv.URL, "timeout: 200ms")
	start := time.Now()
	_, err := callTool(t, c, `{}`, nil)
	wantCode(t, err, legate.CodeTimeout)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}
