package webhook

import (
	"testing"
	"time"
)

// SetBackoffBase shortens the backoff between attempts for the test.
func SetBackoffBase(t testing.TB, d time.Duration) {
	old := backoffBase
	backoffBase = d
	t.Cleanup(func() { backoffBase = old })
}
