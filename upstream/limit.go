package upstream

import (
	"fmt"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream/msglimit"
)

// An upstream's message is bounded by max_result_bytes where it is read
// (package msglimit bounds the go-sdk client's HTTP responses and a stdio
// upstream's output; the relay bounds what it reads itself). A
// message over the limit ends the call as a tool error (tooLarge).

// isTooLarge reports whether err says an answer was over the limit.
func isTooLarge(err error) bool { return msglimit.IsTooLarge(err) }

// maxResult is the upstream's bound on one message, in bytes.
func (u *Upstream) maxResult() int64 {
	if u.cfg.MaxResultBytes > 0 {
		return u.cfg.MaxResultBytes
	}
	return u.m.opts.MaxResultBytes
}

// tooLarge is the tool error of a call to t whose answer was over the limit.
func (u *Upstream) tooLarge(t *Tool, err error) error {
	return &legate.Error{Code: legate.CodeAdapterMapping, Err: err, Message: fmt.Sprintf(
		"the result of %s is larger than %d bytes, the max_result_bytes of upstream %s: ask for less (a smaller page, a narrower query), or an operator may raise max_result_bytes",
		t.Canonical(), u.maxResult(), u.cfg.ID)}
}
