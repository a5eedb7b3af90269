package config

import (
	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// HTTP is the `http:` section: how long `legate serve` waits for a client
// (on /mcp's listener and the panel's) and how much it reads from one.
// The defaults let a slow mobile client send a request's headers, and a
// body of some hundred kilobytes, in time. Event streams and long tool calls are not bounded by these: a
// request's read deadline ends once its body is read, and responses have
// no write timeout.
type HTTP struct {
	ReadHeaderTimeout legate.Duration `yaml:"read_header_timeout" default:"10s" min:"0" desc:"Time a client has to send a request's headers"`
	ReadTimeout       legate.Duration `yaml:"read_timeout" default:"60s" min:"0" desc:"Time a client has to send a whole request, headers and body, from its first byte"`
	IdleTimeout       legate.Duration `yaml:"idle_timeout" default:"120s" min:"0" desc:"A keep-alive connection with no request for this long is closed"`
	MaxBodyBytes      int64           `yaml:"max_body_bytes" default:"4194304" min:"0" desc:"Largest request body to /mcp in bytes (4 MiB); a larger one is answered 413"`
}

// WithDefaults returns h with each unset field at its default, for a
// server given a File that was not loaded by Parse.
func (h HTTP) WithDefaults() HTTP {
	if err := strictyaml.ApplyDefaults(&h); err != nil {
		panic(err) // the tags are constants, checked by the tests
	}
	return h
}
