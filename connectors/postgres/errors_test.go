package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/legate-mcp/legate"
)

// TestMapError covers the server errors a test cannot easily provoke.
func TestMapError(t *testing.T) {
	tests := map[string]struct {
		err       error
		code      legate.Code
		retry     time.Duration
		retryable bool
	}{
		"too many connections": {&pgconn.PgError{Code: "53300", Message: "too many clients"}, legate.CodeRateLimited, time.Second, false},
		"serialization":        {&pgconn.PgError{Code: "40001", Message: "could not serialize"}, legate.CodeTransient, 0, true},
		"deadlock":             {&pgconn.PgError{Code: "40P01", Message: "deadlock detected"}, legate.CodeTransient, 0, true},
		"statement timeout":    {&pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"}, legate.CodeTransient, 0, false},
		"out of memory":        {&pgconn.PgError{Code: "53200", Message: "out of memory"}, legate.CodeTransient, 0, false},
		"syntax":               {&pgconn.PgError{Code: "42601", Message: "syntax error"}, legate.CodeInvalidArgument, 0, false},
		"no privilege":         {&pgconn.PgError{Code: "42501", Message: "permission denied"}, legate.CodePermissionDenied, 0, false},
		"read-only":            {&pgconn.PgError{Code: "25006", Message: "read-only transaction"}, legate.CodePermissionDenied, 0, false},
		"bad password":         {&pgconn.PgError{Code: "28P01", Message: "password authentication failed"}, legate.CodeAuthExpired, 0, false},
		"unique":               {&pgconn.PgError{Code: "23505", Message: "duplicate key"}, legate.CodeConflict, 0, false},
		"wrapped":              {fmt.Errorf("x: %w", &pgconn.PgError{Code: "40P01"}), legate.CodeTransient, 0, true},
		"deadline":             {context.DeadlineExceeded, legate.CodeTimeout, 0, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := mapError(tc.err)
			var le *legate.Error
			if !errors.As(err, &le) || le.Code != tc.code || le.RetryAfter != tc.retry {
				t.Fatalf("got %#v, want %s retry after %s", err, tc.code, tc.retry)
			}
			if retryable(err) != tc.retryable {
				t.Fatalf("retryable = %v", !tc.retryable)
			}
		})
	}
}
