package server

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/store"
)

// SystemPrincipal is who the gateway's own calls are made by, in the audit
// and in policy rules: the notifications of approvals.notify. A static
// token's name cannot be it (TokenNamePattern has no colon).
const SystemPrincipal = "legate:system"

// notifyTimeout bounds one notification.
const notifyTimeout = time.Minute

// notify sends a new request to the tool approvals.notify names, in the
// background (the call does not wait), through the call path as
// SystemPrincipal: audited, measured, a panic recovered. The operator's
// naming the tool is its authorization, so policy does not hold it, which
// would open a request that is notified in turn.
func (x *executor) notify(a *store.Approval) {
	name := x.inbox.Config().Notify
	if name == "" {
		return
	}
	e, ok := notifyTool(x.catalog(), name)
	if !ok {
		x.log.Warn("approvals.notify names no tool; the request is not notified", "notify", name, "approval", a.ID)
		return
	}
	args, _ := json.Marshal(map[string]any{
		"event": "approval.requested",
		"payload": map[string]any{
			"approval_id": a.ID, "tool": a.Tool, "class": a.Class, "principal": a.Principal, "tenant": a.Tenant,
			"arguments": a.Args, "expires_at": a.ExpiresAt, "approve": "legate approvals approve " + a.ID,
		},
	})
	r := &Request{Entry: e, Args: args, Caller: connectors.Caller{Principal: SystemPrincipal}, Class: classOf(e, args),
		OperationID: "approval-" + a.ID, Start: time.Now(), ArgsHash: policy.ArgsHash(args), system: true}
	x.notifying.Go(func() {
		defer func() {
			// The call path recovers a tool's panic; this, one of its own,
			// so a notification can never end the process.
			if p := recover(); p != nil {
				x.log.Error("approval notification panicked", "approval", a.ID, "notify", e.Canonical,
					"panic_hash", toolresult.TextHash(fmt.Sprint(p)), "stack", string(debug.Stack()))
			}
		}()
		ctx, cancel := context.WithTimeout(x.life, notifyTimeout)
		defer cancel()
		res, err := x.call(ctx, r)
		if err == nil && res != nil && res.IsError {
			err = fmt.Errorf("the tool reported an error")
		}
		if err != nil {
			// Its text may quote the payload, which holds the arguments.
			x.log.Warn("approval notification failed", append([]any{"approval", a.ID, "notify", e.Canonical}, toolresult.ErrorAttrs(err)...)...)
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
