package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/legate-mcp/legate"
)

// mapError turns a driver error into the canonical error of the
// connector; nil stays nil. The server's message is kept; it never holds
// the password.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var le *legate.Error
	if errors.As(err, &le) {
		return err
	}
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		code := serverCode(me.Number)
		msg := fmt.Sprintf("mysql: %s (error %d)", me.Message, me.Number)
		switch me.Number {
		case 1969, 3024, 1317:
			msg += ": the statement was stopped, most likely by the statement timeout; narrow the query"
		case 1792:
			msg += ": query runs read-only; writes go through execute"
		}
		e := &legate.Error{Code: code, Message: msg, Err: err}
		if code == legate.CodeRateLimited {
			e.RetryAfter = time.Second
		}
		return e
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &legate.Error{Code: legate.CodeTimeout, Message: "mysql: the statement did not finish in time", Err: err}
	case errors.Is(err, context.Canceled):
		return &legate.Error{Code: legate.CodeTransient, Message: "mysql: the call was cancelled", Err: err}
	case errors.Is(err, sql.ErrNoRows):
		return &legate.Error{Code: legate.CodeNotFound, Message: "mysql: no row", Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysqldriver.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) {
		return &legate.Error{Code: legate.CodeTransient, Message: "mysql: cannot reach the server: " + err.Error(), Err: err}
	}
	return &legate.Error{Code: legate.CodeInvalidArgument, Message: "mysql: " + err.Error(), Err: err}
}

// serverCode is the canonical class of a server error number.
func serverCode(n uint16) legate.Code {
	switch n {
	case 1040, 1203, 1226: // too many connections, user connection limit, resource limit
		return legate.CodeRateLimited
	case 1205, 1213, 1969, 3024, 1317, 1053, 1927: // lock wait timeout, deadlock, statement timeout, interrupted, shutdown
		return legate.CodeTransient
	case 1044, 1142, 1143, 1227, 1370, 1792, 1290, 1836, 1095: // denied, read-only transaction or server
		return legate.CodePermissionDenied
	case 1045, 1698, 1820, 1862: // access denied (authentication), password expired
		return legate.CodeAuthExpired
	case 1049: // unknown database
		return legate.CodeNotFound
	case 1062, 1451, 1452, 1216, 1217, 1586, 3819, 4025: // duplicate key, foreign key, check constraint
		return legate.CodeConflict
	}
	if n >= 2000 { // client-side errors
		return legate.CodeTransient
	}
	return legate.CodeInvalidArgument // syntax (1064), unknown column (1054) or table (1146), data errors …
}

// retryable reports a deadlock or a lock wait timeout.
func retryable(err error) bool {
	var me *mysqldriver.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}
