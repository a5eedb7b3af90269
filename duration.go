package legate

import (
	"fmt"
	"time"
)

// Duration is a time.Duration that decodes from strings such as "30s".
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use e.g. 30s, 2m)", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats the duration as Go does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
