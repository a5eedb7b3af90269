package operations

import (
	"context"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

// Standalone returns the operations over p's store alone, for a process
// that runs no server on it (the CLI on a state directory no server runs
// on): what they change a server started on the store finds there. p
// needs Store and Config; Vault stores secrets, Connect builds the
// upstreams an added one is connected through, and Principal is who acts.
// Audit rows are appended to the store before an operation returns; one
// that cannot be written is reported to warn. The operations on live
// state (status, sessions, quarantine…) need a server's parts and are not
// called on these.
func Standalone(p Parts, warn func(error)) *Ops {
	st := p.Store
	p.Inbox = policy.NewInbox(st.Approvals(), p.Config().Approvals)
	p.Audit = func(row store.AuditRow) {
		if err := st.Audit().Append(context.Background(), []store.AuditRow{row}); err != nil && warn != nil {
			warn(err)
		}
	}
	return New(p)
}
