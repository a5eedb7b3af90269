package server

import (
	"context"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// sourceOf names a call's source for metrics and audit: "native:<id>",
// "upstream:<id>" or "builtin".
func sourceOf(r *Request) string {
	switch s := subjectOf(r); {
	case s.Upstream != "":
		return "upstream:" + s.Upstream
	case s.Connector != builtinSource:
		return "native:" + s.Connector
	}
	return "builtin"
}

// outcomeCode is "ok", the canonical code of err, "TOOL_ERROR" for an
// upstream's own isError result, or "PROTOCOL_ERROR" for a relayed
// JSON-RPC error.
func outcomeCode(res *Result, err error) string {
	switch {
	case toolresult.ProtocolError(err) != nil:
		return "PROTOCOL_ERROR"
	case err != nil:
		return string(legate.CodeOf(err))
	case res != nil && res.IsError:
		return "TOOL_ERROR"
	}
	return "ok"
}

// replayNote is where a tool below observe (legate.approval_status)
// notes that its result is the stored outcome of an approved request: its
// audit row is then a replay of that request.
type replayNote struct{ approvalID string }

type replayNoteKey struct{}

// noteReplay marks the call of ctx as answering with the stored outcome
// of approval id.
func noteReplay(ctx context.Context, id string) {
	if n, ok := ctx.Value(replayNoteKey{}).(*replayNote); ok {
		n.approvalID = id
	}
}

// decisionReplay is the decision of an audit row for a call that returned
// the stored outcome of an approved request instead of running the tool.
const decisionReplay = "replay"

// Outcomes of calls refused before the call path.
const (
	outcomeUnknownTool = "UNKNOWN_TOOL"
	sourceUnknown      = "unknown"
)

// auditRefused writes the audit row and metrics of a call refused before
// the call path (an unknown or quarantined tool): who called, the name
// they gave, and the outcome. The name is the caller's own text, so it is
// bounded and made printable; the metrics name no unknown tool, whose
// names would be as many series.
func (g *Gateway) auditRefused(row store.AuditRow) {
	row.Time = time.Now()
	row.Tool = audit.BoundName(row.Tool)
	label := row.Tool
	if row.Source == sourceUnknown {
		label = "(unknown)"
	}
	g.metrics.Calls.WithLabelValues(label, row.Source, row.Outcome).Inc()
	g.audit.Add(row)
}

// scrapeSources are what the metrics read from the gateway at scrape time.
type scrapeSources struct{ g *Gateway }

func (s scrapeSources) PendingApprovals(ctx context.Context) (int, error) {
	return s.g.inbox.Store().CountPending(ctx)
}

func (s scrapeSources) CatalogSize() int { return s.g.Catalog().Len() }

func (s scrapeSources) Approvals() store.ApprovalStore { return s.g.inbox.Store() }

func (s scrapeSources) UpstreamStatus(ctx context.Context) ([]upstream.Status, error) {
	return s.g.upstreams.Status(ctx)
}

var _ interface {
	audit.Sources
	audit.ApprovalLister
} = scrapeSources{}
