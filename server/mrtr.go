package server

import (
	"time"

	"github.com/legate-mcp/legate/rounds"
)

// Multi-round-trip calls: a retry's request state identifies the logical
// call it continues (package rounds tells how). Policy and approval apply
// to its first round (decide), one audit row to its last (observe).

// stateTTL is how long a client has to answer an upstream's input request.
const stateTTL = 10 * time.Minute

// needsInput reports whether res asks the client for input: the logical
// call goes on.
func (res *Result) needsInput() bool {
	return res != nil && (res.MCP != nil && res.MCP.NeedsInput() || res.MCP == nil && res.inputRequired)
}

// subjectOfRound is what a call's request state is bound to.
func subjectOfRound(r *Request) string {
	return rounds.Subject(r.Caller.Principal, r.Caller.Tenant, r.Caller.Session, "tools/call", r.Entry.Canonical, r.ArgsHash)
}
