// Package broadcast keeps the log of list-changed notifications short.
// When a list changes, the go-sdk server sends notifications/*/list_changed
// to every session and logs a warning for each it could not reach: a
// session whose client went away, or that listens on no stream, which is
// the common case and no fault. Quiet, a sending middleware, logs each such
// session at debug and, once the broadcast is over, one line that says how
// many sessions were not told.
package broadcast

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// settle is how long after the last failure a broadcast counts as over:
// the SDK tells sessions one after another, each refusal at once.
const settle = 500 * time.Millisecond

// Quiet counts the list-changed notifications that did not reach their
// session and logs them once per broadcast.
type Quiet struct {
	log *slog.Logger

	mu     sync.Mutex
	failed map[string]int // by method, in the broadcast under way
	timer  *time.Timer
}

// New returns a Quiet logging to log.
func New(log *slog.Logger) *Quiet {
	return &Quiet{log: log, failed: map[string]int{}}
}

// Middleware is the sending middleware: a list-changed notification that
// fails is logged at debug and counted, and its error is not passed on
// (where the SDK would log it once per session).
func (q *Quiet) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil || !strings.HasPrefix(method, "notifications/") || !strings.HasSuffix(method, "/list_changed") {
			return res, err
		}
		sid := ""
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			sid = ss.ID()
		}
		q.log.Debug("a session was not told its list changed", "method", method, "session", sid, "error", err)
		q.count(method)
		return res, nil
	}
}

func (q *Quiet) count(method string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failed[method]++
	if q.timer == nil {
		q.timer = time.AfterFunc(settle, q.report)
	} else {
		q.timer.Reset(settle)
	}
}

// report logs the broadcast's failures, one line per method.
func (q *Quiet) report() {
	q.mu.Lock()
	failed := q.failed
	q.failed, q.timer = map[string]int{}, nil
	q.mu.Unlock()
	for method, n := range failed {
		q.log.Info("sessions not told their list changed (their clients went away, or listen on no stream); they see the change at their next list",
			"method", method, "sessions", n)
	}
}
