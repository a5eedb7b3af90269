package mysql

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

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
		"too many connections": {&mysqldriver.MySQLError{Number: 1040, Message: "Too many connections"}, legate.CodeRateLimited, time.Second, false},
		"lock wait timeout":    {&mysqldriver.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}, legate.CodeTransient, 0, true},
		"deadlock":             {&mysqldriver.MySQLError{Number: 1213, Message: "Deadlock found"}, legate.CodeTransient, 0, true},
		"statement timeout":    {&mysqldriver.MySQLError{Number: 1969, Message: "max_statement_time exceeded"}, legate.CodeTransient, 0, false},
		"syntax":               {&mysqldriver.MySQLError{Number: 1064, Message: "You have an error"}, legate.CodeInvalidArgument, 0, false},
		"denied":               {&mysqldriver.MySQLError{Number: 1142, Message: "command denied"}, legate.CodePermissionDenied, 0, false},
		"read-only":            {&mysqldriver.MySQLError{Number: 1792, Message: "read-only transaction"}, legate.CodePermissionDenied, 0, false},
		"login":                {&mysqldriver.MySQLError{Number: 1045, Message: "Access denied"}, legate.CodeAuthExpired, 0, false},
		"duplicate":            {&mysqldriver.MySQLError{Number: 1062, Message: "Duplicate entry"}, legate.CodeConflict, 0, false},
		"wrapped":              {fmt.Errorf("x: %w", &mysqldriver.MySQLError{Number: 1213}), legate.CodeTransient, 0, true},
		"bad connection":       {mysqldriver.ErrInvalidConn, legate.CodeTransient, 0, false},
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
