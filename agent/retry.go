package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/legate-mcp/legate/agent/internal/wire"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// Bounds of the retries.
const (
	defaultStallLog = 15 * time.Second
	defaultBackoff  = time.Second
	maxBackoff      = 30 * time.Second
	maxRetryAfter   = 5 * time.Minute
)

// errStalled is an attempt that ran past its deadline.
var errStalled = errors.New("no complete answer within the request timeout")

// callModel makes one model call of turn n: streamed, each attempt within
// the profile's request timeout, a stall logged as it grows, retried as
// retryable says with jittered exponential backoff. t is never changed,
// so every attempt sends the same conversation. retried counts each
// retry.
func (r *Runner) callModel(ctx context.Context, m Model, p Profile, t Turn, n, max int, retried func()) (*Reply, error) {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeoutCause(ctx, p.RequestTimeout, errStalled)
		w := r.watch(actx, n, max, attempt)
		reply, err := m.Turn(actx, t, w.got)
		w.stop()
		stalled := errors.Is(context.Cause(actx), errStalled)
		cancel()
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if stalled {
			err = fmt.Errorf("%w (%s)", errStalled, p.RequestTimeout)
		}
		ok, wait := retryable(err, stalled)
		if !ok || attempt > p.MaxRetries {
			if ok {
				err = fmt.Errorf("after %d attempts: %w", attempt, err)
			}
			return nil, err
		}
		if wait == 0 {
			wait = r.backoff(attempt)
		}
		retried()
		r.log().Warn(fmt.Sprintf("turn %d/%d attempt %d failed, trying again in %s", n, max, attempt, wait.Round(time.Millisecond)), "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// backoff is the wait before retry n: exponential from the base, capped,
// with jitter, as every HTTP client of Legate's backs off.
func (r *Runner) backoff(n int) time.Duration {
	return (&httpkit.Retry{Base: cmp.Or(r.Backoff, defaultBackoff), MaxWait: maxBackoff}).Backoff(n)
}

// retryable says whether a failed model call is worth another attempt, and
// how long the provider asked to wait (0: not said). A stall, a dropped
// stream or connection, a 5xx, a 408, 409 or 429 is the provider having a
// moment; any other 4xx (400, 401, 403, 404) is a verdict on the request.
func retryable(err error, stalled bool) (bool, time.Duration) {
	if stalled || errors.Is(err, ErrDropped) {
		return true, 0
	}
	status, resp := 0, (*http.Response)(nil)
	var ae *wire.APIError
	if errors.As(err, &ae) {
		status, resp = ae.StatusCode, ae.Response
	}
	if status == 0 {
		// No HTTP answer: a refused, reset or dropped connection, or a
		// stream that broke off, is worth another go.
		var ne net.Error
		return errors.As(err, &ne) || !errors.Is(err, context.Canceled), 0
	}
	switch {
	case status >= 500, status == http.StatusTooManyRequests, status == http.StatusRequestTimeout, status == http.StatusConflict:
		return true, retryAfter(resp)
	}
	return false, 0
}

// retryAfter reads a response's Retry-After (seconds or an HTTP date),
// capped; 0 when absent.
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	d, _ := netguard.RetryAfter(resp.Header, time.Now())
	return min(d, maxRetryAfter)
}

// stallWatch logs an attempt that has received nothing, as the silence
// grows, and the first bytes once they come.
type stallWatch struct {
	once  sync.Once
	first chan struct{}
	done  chan struct{}
	wg    sync.WaitGroup
}

func (r *Runner) watch(ctx context.Context, n, max, attempt int) *stallWatch {
	every := r.StallLog
	if every <= 0 {
		every = defaultStallLog
	}
	w := &stallWatch{first: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	prefix := fmt.Sprintf("turn %d/%d attempt %d", n, max, attempt)
	log := r.log()
	w.wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		silent := false
		firstToken := func() {
			if silent {
				log.Info(fmt.Sprintf("%s — first token after %s", prefix, time.Since(start).Round(10*time.Millisecond)))
			}
		}
		for {
			select {
			case <-w.first:
				firstToken()
				return
			case <-w.done:
				// The first token and the end of the attempt can arrive
				// together; select picks either, and the first token is
				// still logged.
				select {
				case <-w.first:
					firstToken()
				default:
				}
				return
			case <-ctx.Done():
				return
			case <-t.C:
				silent = true
				log.Warn(fmt.Sprintf("%s — nothing received after %s", prefix, time.Since(start).Round(time.Second)))
			}
		}
	})
	return w
}

func (w *stallWatch) got() { w.once.Do(func() { close(w.first) }) }

func (w *stallWatch) stop() {
	close(w.done)
	w.wg.Wait()
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}
