package store

import (
	"context"
	"log/slog"
	"time"
)

// PruneEvery deletes what is older than retention through prune, at once
// (even when ctx has ended already: a short-lived process prunes too) and
// every hour until ctx ends, logging what it removed; what names it in the
// log. A retention of 0 or less keeps everything.
func PruneEvery[N int | int64](ctx context.Context, log *slog.Logger, what string, retention time.Duration, prune func(ctx context.Context, before time.Time) (N, error)) {
	if retention <= 0 {
		return
	}
	once := func(ctx context.Context) {
		if n, err := prune(ctx, time.Now().Add(-retention)); err != nil {
			log.Warn("pruning "+what, "error", err)
		} else if n > 0 {
			log.Info("pruned "+what, "count", n, "older_than", retention)
		}
	}
	first, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	once(first)
	cancel()
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			once(ctx)
		}
	}
}
