package config

import (
	"github.com/legate-mcp/legate"
	"time"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// The defaults of the `http:` section: a slow mobile client still sends a
// request's headers and a body of some hundred kilobytes within them.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxBodyBytes      = 4 << 20
)

// HTTP is the `http:` section: how long `legate serve` waits for a client
// and how much it reads from one. Event streams and long tool calls are
// not bounded by these: a request's read deadline ends once its body is
// read, and responses have no write timeout.
type HTTP struct {
	// ReadHeaderTimeout bounds reading a request's headers (default 10s).
	ReadHeaderTimeout legate.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, headers and body, from
	// its first byte (default 60s).
	ReadTimeout legate.Duration `yaml:"read_timeout"`
	// IdleTimeout closes a keep-alive connection that carries no request
	// for this long (default 120s).
	IdleTimeout legate.Duration `yaml:"idle_timeout"`
	// MaxBodyBytes bounds a request body to /mcp (default 4194304, 4 MiB);
	// a larger one is answered 413.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
}

// WithDefaults returns h with each unset field at its default.
func (h HTTP) WithDefaults() HTTP {
	set := func(d *legate.Duration, def time.Duration) {
		if *d == 0 {
			*d = legate.Duration(def)
		}
	}
	set(&h.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&h.ReadTimeout, DefaultReadTimeout)
	set(&h.IdleTimeout, DefaultIdleTimeout)
	if h.MaxBodyBytes == 0 {
		h.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return h
}

// Validate checks the section; path is its key path.
func (h *HTTP) Validate(path string) []error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"read_header_timeout", int64(h.ReadHeaderTimeout)}, {"read_timeout", int64(h.ReadTimeout)},
		{"idle_timeout", int64(h.IdleTimeout)}, {"max_body_bytes", h.MaxBodyBytes},
	} {
		if f.v < 0 {
			errs = append(errs, &strictyaml.PathError{Path: path + "." + f.name, Msg: "must not be negative"})
		}
	}
	return errs
}
