// Package discovery is when and how an upstream's tools are listed: a
// listing on one session (List), the loop that lists an upstream at start,
// after its session ends, after a failure and every refresh_interval
// (Loop), and the poll that picks up what another process cached (Poll).
// Package upstream says what a refresh does with a listing (the cache,
// pins, the catalog).
package discovery

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/upstream/cache"
)

// List fetches every page of upstream id's tools on session cs, and the
// URIs of its resources when it has some (an empty, non-nil list
// otherwise), within timeout.
func List(ctx context.Context, cs *mcp.ClientSession, id string, timeout time.Duration, log *slog.Logger) ([]*mcp.Tool, []string, error) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(lctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("listing tools of upstream %s: %w", id, err)
		}
		tools = append(tools, t)
	}
	uris := []string{}
	if caps := cs.InitializeResult().Capabilities; caps != nil && caps.Resources != nil {
		for r, err := range cs.Resources(lctx, nil) {
			if err != nil {
				if lctx.Err() == nil {
					log.Warn("listing resources", "error", err)
				}
				break
			}
			uris = append(uris, r.URI)
		}
	}
	return tools, uris, nil
}

// Loop refreshes one upstream at start, after its shared session ends (a
// stdio process that exits is restarted with backoff and re-listed),
// after a failure once its backoff passes, and every refresh_interval.
type Loop struct {
	// Every is the refresh_interval; 0 for none.
	Every time.Duration
	// Refresh lists the upstream's tools and caches them.
	Refresh func(context.Context) (cache.Diff, error)
	// Tried is called after each refresh, failed or not.
	Tried func()
	// Backoff is the upstream's current reconnection backoff.
	Backoff func() time.Duration
	// Ended is closed when the upstream's shared session ends; nil when
	// there is none to watch.
	Ended func() <-chan struct{}
	Log   *slog.Logger
}

// Run runs the loop until ctx ends.
func (l Loop) Run(ctx context.Context) {
	var tick <-chan time.Time
	if l.Every > 0 {
		t := time.NewTicker(l.Every)
		defer t.Stop()
		tick = t.C
	}
	for {
		var wait <-chan time.Time
		var ended <-chan struct{}
		d, err := l.Refresh(ctx)
		l.Tried()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			l.Log.Warn("upstream refresh failed", "error", err)
			wait = time.After(l.Backoff())
		} else {
			if !d.Empty() {
				l.Log.Info("upstream tools changed", "diff", d.String())
			}
			ended = l.Ended()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-wait:
		case <-ended:
			l.Log.Warn("upstream session ended; reconnecting")
			select {
			case <-ctx.Done():
				return
			case <-time.After(l.Backoff()):
			}
		}
	}
}

// Poll calls reload every interval in which the store's cache version
// differs from the one last read (seen): another process (the CLI)
// changed the caches.
func Poll(ctx context.Context, every time.Duration, version func(context.Context) (int64, error), seen func() int64, reload func(context.Context) (bool, error), log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ver, err := version(ctx)
		if err != nil || ver == seen() {
			continue
		}
		if changed, err := reload(ctx); err != nil && ctx.Err() == nil {
			log.Warn("reloading tool cache", "error", err)
		} else if changed {
			log.Info("tool cache changed in the store; catalog updated")
		}
	}
}

// First is closed (C) once an upstream's first listing was tried.
type First struct {
	C    chan struct{}
	once sync.Once
}

// NewFirst returns a First not yet done.
func NewFirst() *First { return &First{C: make(chan struct{})} }

// Done records that the first listing was tried (nil: nothing to record).
func (f *First) Done() {
	if f != nil {
		f.once.Do(func() { close(f.C) })
	}
}
