// Package coldstart holds the first tools/list after a start with upstreams
// never listed before (an empty cache) until each was tried, for at most the
// config's cold_start_wait: clients that ignore list_changed (some framework
// adapters list once) would otherwise never see their tools.
package coldstart

import (
	"context"
	"sync/atomic"
	"time"
)

// Listed is what a Wait waits on: the upstreams' first listing
// (upstream.Manager).
type Listed interface {
	WaitListed(ctx context.Context) error
}

// Wait holds tools/list until the upstreams were first listed, at most Max.
type Wait struct {
	Ups     Listed
	Max     time.Duration
	started atomic.Bool // the upstreams are being listed (Start ran)
	warm    atomic.Bool // waited once: no tools/list waits again
}

// Start is called once the upstreams are being listed; before it, nothing
// waits.
func (c *Wait) Start() { c.started.Store(c.Max > 0) }

// Before is called before each tools/list is answered.
func (c *Wait) Before(ctx context.Context) {
	if c.warm.Load() || !c.started.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.Max)
	defer cancel()
	if c.Ups.WaitListed(ctx) == nil || ctx.Err() == context.DeadlineExceeded {
		c.warm.Store(true)
	}
}
