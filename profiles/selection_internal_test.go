package profiles

import (
	"testing"
	"time"

	"github.com/legate-mcp/legate/upstream"
)

// An upstream counts as connected unless it has been failing for longer
// than DownThreshold since it last answered, or never answered.
func TestUpstreamUp(t *testing.T) {
	now := time.Now()
	for name, c := range map[string]struct {
		s    upstream.Status
		want bool
	}{
		"healthy":            {upstream.Status{RefreshedAt: now.Add(-time.Hour)}, true},
		"failing briefly":    {upstream.Status{LastError: "refused", RefreshedAt: now.Add(-DownThreshold / 2)}, true},
		"down past the wait": {upstream.Status{LastError: "refused", RefreshedAt: now.Add(-2 * DownThreshold)}, false},
		"never listed":       {upstream.Status{LastError: "refused"}, false},
	} {
		if got := UpstreamUp(c.s, now); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
