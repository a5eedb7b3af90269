package postgres

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/legate-mcp/legate"
)

// mapError turns a pgx error into the canonical error of the connector;
// nil stays nil. The server's message is kept (it names the column, the
// syntax error, the missing grant); it never holds the password.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var le *legate.Error
	if errors.As(err, &le) {
		return err
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return &legate.Error{Code: pgCode(pg), Message: "postgres: " + pgMessage(pg), Err: err,
			RetryAfter: map[bool]time.Duration{true: time.Second}[pg.Code == "53300"]}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &legate.Error{Code: legate.CodeTimeout, Message: "postgres: the statement did not finish in time", Err: err}
	case errors.Is(err, context.Canceled):
		return &legate.Error{Code: legate.CodeTransient, Message: "postgres: the call was cancelled", Err: err}
	case errors.Is(err, pgx.ErrNoRows):
		return &legate.Error{Code: legate.CodeNotFound, Message: "postgres: no row", Err: err}
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	if errors.As(err, &ne) || errors.As(err, &ce) || pgconn.SafeToRetry(err) {
		return &legate.Error{Code: legate.CodeTransient, Message: "postgres: cannot reach the server: " + connMessage(err), Err: err}
	}
	// The arguments' own faults, as a query or a pipelined read (a batch,
	// whose errors pgx prefixes) reports them.
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error preprocessing batch (build): ")
	if strings.Contains(msg, "expected") && strings.Contains(msg, "arguments") || strings.Contains(msg, "mismatched param and argument count") {
		return &legate.Error{Code: legate.CodeInvalidArgument, Message: "postgres: " + msg + " (params must match the statement's $n)", Err: err}
	}
	if strings.HasPrefix(msg, "failed to encode") || strings.Contains(msg, "cannot ") {
		return &legate.Error{Code: legate.CodeInvalidArgument, Message: "postgres: " + msg, Err: err}
	}
	return &legate.Error{Code: legate.CodeTransient, Message: "postgres: " + err.Error(), Err: err}
}

// pgCode is the canonical class of a server error, by SQLSTATE.
func pgCode(pg *pgconn.PgError) legate.Code {
	switch pg.Code {
	case "53300": // too_many_connections
		return legate.CodeRateLimited
	case "40001", "40P01", "57014", "55P03": // serialization, deadlock, statement timeout, lock not available
		return legate.CodeTransient
	case "42501", "25006": // insufficient_privilege, read_only_sql_transaction
		return legate.CodePermissionDenied
	case "28000", "28P01": // invalid authorization, invalid password
		return legate.CodeAuthExpired
	case "3D000", "3F000": // no such database, no such schema
		return legate.CodeNotFound
	}
	if len(pg.Code) < 2 {
		return legate.CodeTransient
	}
	switch pg.Code[:2] {
	case "23": // integrity constraint violation
		return legate.CodeConflict
	case "08", "53", "57", "58", "XX", "40": // connection, resources, operator intervention, system, internal
		return legate.CodeTransient
	}
	return legate.CodeInvalidArgument // syntax (42), data (22), feature (0A), limits (54) …
}

// pgMessage is the server's message with its SQLSTATE, and what to do
// about the common ones.
func pgMessage(pg *pgconn.PgError) string {
	msg := pg.Message
	if pg.Detail != "" {
		msg += " (" + pg.Detail + ")"
	}
	msg += " (SQLSTATE " + pg.Code + ")"
	switch pg.Code {
	case "57014":
		msg += ": the statement was cancelled, most likely by statement_timeout; narrow the query"
	case "25006":
		msg += ": query runs read-only; writes go through execute"
	case "42601":
		if pg.Position > 0 {
			msg += ", at character " + strconv.Itoa(int(pg.Position))
		}
	}
	return msg
}

// connMessage is a connection failure without the connection string.
func connMessage(err error) string {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Unwrap() != nil {
		return ce.Unwrap().Error()
	}
	return err.Error()
}

// retryable reports a serialization failure or a deadlock.
func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01")
}
