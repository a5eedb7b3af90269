package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/mcpauth"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// newUpstreams builds the upstream manager from the cached tools; it does
// no I/O to upstreams.
func (g *Gateway) newUpstreams(ctx context.Context) error {
	defs, err := sources.UpstreamDefs(ctx, g.opts.Config, g.opts.Store)
	if err != nil {
		return err
	}
	pinSecrets(ctx, g, defs)
	g.upstreams, err = upstream.NewManager(ctx, defs, upstream.Options{
		Store:          g.opts.Store.Upstreams(),
		Pins:           g.opts.Store.Pins(),
		OnQuarantine:   g.quarantines.quarantined,
		Logger:         g.log,
		Version:        g.opts.Version,
		OnToolsChanged: g.toolsChanged,
		PollInterval:   500 * time.Millisecond, // a refresh or acceptance by the CLI or another replica reaches clients within it
		MaxResultBytes: g.opts.Config.MaxResultBytes,
		Authorize:      mcpauth.Wire(g.connections, func() *upstream.Manager { return g.upstreams }, g.opts.Vault),
		OnResourceUpdated: func(ctx context.Context, p *mcp.ResourceUpdatedNotificationParams) {
			g.mcp.ResourceUpdated(ctx, p)
		},
	})
	return err
}

// quarantined reports a tool put in quarantine: a warning in the log (once
// per process: the manager reports each definition once), and the audit
// event, which only a serving gateway writes (see quarantineAudit).
func (a *quarantineAudit) quarantined(q upstream.Quarantined) {
	detail := fmt.Sprintf("definition changed: pinned %.12s, now %.12s; review with legate upstream diff %s, then legate upstream accept %s %s",
		q.PinnedHash, q.Tool.Hash, q.Tool.Upstream, q.Tool.Upstream, q.Tool.Name)
	if q.PinnedHash == "" {
		detail = fmt.Sprintf("not accepted yet (pin: strict), definition %.12s; accept with legate upstream accept %s %s", q.Tool.Hash, q.Tool.Upstream, q.Tool.Name)
	}
	a.logger.Warn("upstream tool quarantined", "tool", q.Tool.Canonical(), "detail", detail)
	a.add(store.AuditRow{Time: time.Now(), Tool: q.Tool.Canonical(), Source: "upstream:" + q.Tool.Upstream,
		Class: string(q.Tool.Class), Decision: "quarantined", Outcome: outcomeQuarantined, Detail: detail})
}

// outcomeQuarantined is the outcome of the audit event of a quarantine.
const outcomeQuarantined = "QUARANTINED"

// quarantineAudit writes the audit event of each quarantine once. Only a
// serving gateway writes it: the gateway of a CLI command (legate tools
// list, tools call) loads the same cache and would repeat the event at
// every run. The quarantines found before the gateway serves (those of
// the cache it starts from) wait for start; and an event the audit log
// holds already (the same tool and definition, from before a restart) is
// not written again.
type quarantineAudit struct {
	writer *audit.Writer
	log    store.AuditStore
	logger *slog.Logger

	mu      sync.Mutex
	serving bool
	held    []store.AuditRow
}

func (a *quarantineAudit) add(row store.AuditRow) {
	a.mu.Lock()
	if !a.serving {
		a.held = append(a.held, row)
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	a.write(row)
}

// start makes the gateway a serving one and writes what was held.
func (a *quarantineAudit) start() {
	a.mu.Lock()
	held := a.held
	a.serving, a.held = true, nil
	a.mu.Unlock()
	for _, row := range held {
		a.write(row)
	}
}

// write queues row unless the audit log records the same event already.
func (a *quarantineAudit) write(row store.AuditRow) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prev, err := a.log.Query(ctx, store.AuditQuery{Tool: row.Tool, Limit: 1000})
	if err == nil && slices.ContainsFunc(prev, func(r store.AuditRow) bool { return r.Outcome == outcomeQuarantined && r.Detail == row.Detail }) {
		return
	}
	a.writer.Add(row)
}

// quarantineError refuses a call to a tool of quarantine by name (canonical
// or wire, under naming), if name is one; t is that tool.
func quarantineError(quarantine []upstream.Quarantined, naming catalog.Naming, name string) (t *upstream.Tool, err error) {
	for _, q := range quarantine {
		c := q.Tool.Canonical()
		if name == c || name == catalog.WireName(c, naming) {
			return q.Tool, &legate.Error{Code: legate.CodePolicyDenied, Message: fmt.Sprintf(
				"%s is quarantined: its definition changed since it was accepted; an admin must review it (legate upstream diff %s) and accept it (legate upstream accept %s %s)",
				c, q.Tool.Upstream, q.Tool.Upstream, q.Tool.Name)}
		}
	}
	return nil, nil
}

// toolsChanged rebuilds the catalog after an upstream's tools changed. A
// catalog that does not build (a new name collides) is refused and the
// current one kept, with the collision logged.
func (g *Gateway) toolsChanged() {
	if g.mcp == nil {
		return // still in New, which builds the first catalog itself
	}
	cat, err := g.buildCatalog()
	if err != nil {
		g.log.Error("upstream tools changed but the catalog cannot be rebuilt; keeping the current one", "error", err)
		return
	}
	g.setCatalog(cat, false)
}

// setCatalog swaps in a new catalog and, when its tools differ from the
// old one's, tells clients: the SDK server's tool registry holds a single
// sentinel entry (tools/list and tools/call never reach the registry: the
// tools middleware answers them), and re-adding it makes the SDK send a
// debounced notifications/tools/list_changed to every client, each in the
// way its protocol version expects.
//
// With force, clients are told even when the catalog's tools are the same
// (what a profile shows changed).
func (g *Gateway) setCatalog(c *catalog.Catalog, force bool) {
	old := g.cat.Swap(c)
	go c.ListJSON() // encoded ahead of the first tools/list, off the caller's path
	if !force && old != nil && old.Fingerprint() == c.Fingerprint() {
		return
	}
	g.mcp.AddTool(&mcp.Tool{Name: "legate__catalog", InputSchema: json.RawMessage(`{"type":"object"}`)}, unreachable)
}

// unreachable is the handler of the mirrored registry entries.
func unreachable(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("internal error: tool registry entry called directly")
}

// coldStart holds the first tools/list after a start with upstreams never
// listed before (an empty cache) until each was tried, for at most the
// config's cold_start_wait: clients that ignore list_changed (some
// framework adapters list once) would otherwise never see their tools.
type coldStart struct {
	ups     *upstream.Manager
	max     time.Duration
	started atomic.Bool // the upstreams are being listed (Start ran)
	warm    atomic.Bool // waited once: no tools/list waits again
}

// wait is called before each tools/list is answered.
func (c *coldStart) wait(ctx context.Context) {
	if c.warm.Load() || !c.started.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.max)
	defer cancel()
	if c.ups.WaitListed(ctx) == nil || ctx.Err() == context.DeadlineExceeded {
		c.warm.Store(true)
	}
}
