// Package suite holds what the parts of the store suite (package
// storetest and its kbtest, eventstest, quotastest and vectorstest) share:
// their clock and their check of an error.
package suite

import (
	"testing"
	"time"
)

// Base is the suites' clock: a whole second, far from zero.
var Base = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// Must fails t at once on err.
func Must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
