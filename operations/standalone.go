package operations

import (
	"context"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// Standalone returns the operations over a store alone, for a process
// that runs no server on it (the CLI on a state directory no server runs
// on): what they change a server started on the store finds there. Audit
// rows are appended to the store before an operation returns; one that
// cannot be written is reported to warn. The operations on live state
// (status, sessions, refreshing an upstream…) need a server's parts and
// are not called on these; connect builds the upstreams an added one is
// connected through.
func Standalone(cfg *config.File, st store.Store, v *vault.Vault, connect func(context.Context) (*upstream.Manager, func(), error), warn func(error)) *Ops {
	return New(Parts{
		Store: st, Vault: v, Config: func() *config.File { return cfg }, Connect: connect,
		Inbox: policy.NewInbox(st.Approvals(), cfg.Approvals),
		Audit: func(row store.AuditRow) {
			if err := st.Audit().Append(context.Background(), []store.AuditRow{row}); err != nil && warn != nil {
				warn(err)
			}
		},
	})
}
