package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/store"
)

// notifyTimeout bounds one notification.
const notifyTimeout = time.Minute

// notify sends a new request to the tool approvals.notify names, in the
// background (the call does not wait), through the call path as the
// gateway itself (ExecutorOptions.Notify): audited, measured, a panic
// recovered. The operator's naming the tool is its authorization, so
// policy does not hold it, which would open a request that is notified in
// turn.
func (x *Executor) notify(a *store.Approval) {
	name := x.inbox.Config().Notify
	if name == "" {
		return
	}
	e, ok := notifyTool(x.o.Catalog(), name)
	if !ok {
		x.o.Log.Warn("approvals.notify names no tool; the request is not notified", "notify", name, "approval", a.ID)
		return
	}
	args, _ := json.Marshal(map[string]any{
		"event": "approval.requested",
		"payload": map[string]any{
			"approval_id": a.ID, "tool": a.Tool, "class": a.Class, "principal": a.Principal, "tenant": a.Tenant,
			"arguments": a.Args, "expires_at": a.ExpiresAt, "approve": "legate approvals approve " + a.ID,
		},
	})
	x.notifying.Go(func() {
		defer func() {
			// The call path recovers a tool's panic; this, one of its own,
			// so a notification can never end the process.
			if p := recover(); p != nil {
				x.o.Log.Error("approval notification panicked", "approval", a.ID, "notify", e.Canonical,
					"panic_hash", toolresult.TextHash(fmt.Sprint(p)), "stack", string(debug.Stack()))
			}
		}()
		ctx, cancel := context.WithTimeout(x.life, notifyTimeout)
		defer cancel()
		if err := x.o.Notify(ctx, e, args, "approval-"+a.ID); err != nil {
			// Its text may quote the payload, which holds the arguments.
			x.o.Log.Warn("approval notification failed", append([]any{"approval", a.ID, "notify", e.Canonical}, toolresult.ErrorAttrs(err)...)...)
		}
	})
}

// notifyTool is the tool approvals.notify names: a tool by canonical name,
// or a connector instance whose send tool is meant (a webhook instance's
// id, as `notify: hooks`).
func notifyTool(cat *catalog.Catalog, name string) (*catalog.Entry, bool) {
	if e, ok := cat.Lookup(name); ok && strings.Contains(name, ".") {
		return e, true
	}
	return cat.Lookup(name + ".send")
}
