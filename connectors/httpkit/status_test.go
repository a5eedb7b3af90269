package httpkit_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
)

// The one table of statuses: every connector maps an answer it does not
// accept through it.
func TestStatusCode(t *testing.T) {
	tests := map[string]struct {
		status    int
		code      legate.Code
		retryable bool
	}{
		"301 redirect not followed": {301, legate.CodeAdapterMapping, false},
		"304":                       {304, legate.CodeAdapterMapping, false},
		"400":                       {400, legate.CodeInvalidArgument, false},
		"401":                       {401, legate.CodeAuthExpired, false},
		"403":                       {403, legate.CodePermissionDenied, false},
		"404":                       {404, legate.CodeNotFound, false},
		"405":                       {405, legate.CodeInvalidArgument, false},
		"408":                       {408, legate.CodeTransient, true},
		"409":                       {409, legate.CodeConflict, false},
		"410":                       {410, legate.CodeNotFound, false},
		"412":                       {412, legate.CodeConflict, false},
		"413":                       {413, legate.CodeInvalidArgument, false},
		"422":                       {422, legate.CodeInvalidArgument, false},
		"425 too early":             {425, legate.CodeTransient, true},
		"429":                       {429, legate.CodeRateLimited, true},
		"451":                       {451, legate.CodeInvalidArgument, false},
		"500":                       {500, legate.CodeTransient, true},
		"501":                       {501, legate.CodeTransient, false},
		"502":                       {502, legate.CodeTransient, true},
		"503":                       {503, legate.CodeTransient, true},
		"504":                       {504, legate.CodeTransient, true},
		"505":                       {505, legate.CodeTransient, false},
		"599":                       {599, legate.CodeTransient, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := httpkit.StatusCode(tc.status); got != tc.code {
				t.Errorf("StatusCode(%d) = %s; want %s", tc.status, got, tc.code)
			}
			if got := httpkit.RetryableStatus(tc.status); got != tc.retryable {
				t.Errorf("RetryableStatus(%d) = %v; want %v", tc.status, got, tc.retryable)
			}
		})
	}
}

func TestStatusErrorRetryAfter(t *testing.T) {
	now := time.Now()
	tests := map[string]struct {
		status     int
		retryAfter string
		min, max   time.Duration
	}{
		"429 seconds":          {429, "7", 7 * time.Second, 7 * time.Second},
		"429 date":             {429, now.Add(time.Minute).UTC().Format(http.TimeFormat), 58 * time.Second, time.Minute},
		"429 without":          {429, "", 0, 0},
		"503 keeps no wait":    {503, "7", 0, 0},
		"429 unparsable":       {429, "soon", 0, 0},
		"429 date in the past": {429, now.Add(-time.Hour).UTC().Format(http.TimeFormat), 0, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
			if tc.retryAfter != "" {
				resp.Header.Set("Retry-After", tc.retryAfter)
			}
			e := httpkit.StatusError(resp, "svc: server answered")
			if e.Code != httpkit.StatusCode(tc.status) || e.Message != "svc: server answered" {
				t.Errorf("error %v", e)
			}
			if e.RetryAfter < tc.min || e.RetryAfter > tc.max {
				t.Errorf("RetryAfter %v; want between %v and %v", e.RetryAfter, tc.min, tc.max)
			}
		})
	}
}
