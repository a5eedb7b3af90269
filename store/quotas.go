package store

import (
	"context"
	"time"
)

// QuotaCount is how much of one budget was used in one window.
type QuotaCount struct {
	// Key names the budget and whose it is (package budget's form).
	Key string
	// Start is when the window began.
	Start time.Time
	Count int64
}

// QuotaStore counts what budgets allow per fixed window, for every
// replica to share: a budget holds across them as it does across one
// process's calls.
type QuotaStore interface {
	// Take adds n to the count of key in the window that began at start if
	// the count stays within limit, atomically, reporting whether it did
	// and the count after (taken) or as it stands (not). Taking 0 within
	// limit-1 asks whether any of the budget is left; a limit of
	// math.MaxInt64 always takes, and a negative n with it gives back
	// what was taken.
	Take(ctx context.Context, key string, start time.Time, n, limit int64) (count int64, taken bool, err error)
	// Counts returns the counts of the windows that began at or after
	// since, by key then start.
	Counts(ctx context.Context, since time.Time) ([]QuotaCount, error)
	// Prune deletes the windows that began before before, reporting how
	// many.
	Prune(ctx context.Context, before time.Time) (int64, error)
}
