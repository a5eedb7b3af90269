package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Age is a flag's span of time back from now: a Go duration, or whole
// days ("7d"), which time.ParseDuration does not take.
type Age time.Duration

func (a *Age) String() string { return time.Duration(*a).String() }
func (a *Age) Type() string   { return "duration" }

func (a *Age) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want a number of days, e.g. 7d", s)
		}
		*a = Age(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q: want a duration (90m, 24h) or days (7d)", s)
	}
	*a = Age(d)
	return nil
}
