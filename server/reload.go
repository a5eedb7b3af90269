package server

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/ratelimit"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/vault"
)

// A running gateway takes a new configuration, and the connectors and
// upstreams added to or removed from the store, without a restart and
// without dropping a client session (Reload). What a reload changes is
// one live value, swapped whole: a call reads it once and finishes on
// the one it started with. The rest of the configuration (listen, auth,
// http, store, audit, approvals, ...) is fixed for the process's life:
// a reload that changes it says which keys wait for the next start.

// live is the part of the gateway a reload replaces.
type live struct {
	cfg          *config.File
	policy       *policy.Policy
	gate         *quota.Gate // the rate limits and budgets; nil: none
	callTimeout  time.Duration
	repeatWindow time.Duration // a write repeated within it is the same operation (opkey)
	instances    instances.Set
}

// live returns what the gateway runs with now.
func (g *Gateway) now() *live { return g.live.Load() }

// newLive builds what cfg describes, reusing each connector instance of
// old whose definition is unchanged (its pools and clients). It does no
// I/O but reading the store, and changes nothing: every problem is
// reported, joined (instances.Build).
func (rl *reloader) newLive(ctx context.Context, cfg *config.File, old *live) (*live, error) {
	overBudget := func(scope, budget string) { rl.g.metrics.OverBudget.WithLabelValues(scope, budget).Inc() }
	l := &live{cfg: cfg, callTimeout: time.Duration(cfg.CallTimeout),
		gate: quota.NewGate(ratelimit.New(cfg.Limits), quota.NewBudgets(cfg.Budgets, rl.g.opts.Store.Quotas(), overBudget))}
	if cfg.RepeatWindow != nil { // nil in a File built without defaults
		l.repeatWindow = time.Duration(*cfg.RepeatWindow)
	}
	if l.callTimeout == 0 {
		l.callTimeout = DefaultCallTimeout
	}
	var err error
	if l.policy, err = policy.New(cfg.Policy); err != nil {
		return nil, err
	}
	defs, err := sources.InstanceDefs(ctx, cfg, rl.g.opts.Store)
	if err != nil {
		return nil, err
	}
	var prev instances.Set
	if old != nil {
		prev = old.instances
	}
	if l.instances, err = instances.Build(defs, prev, instances.Options{StateDir: rl.g.opts.StateDir, KB: rl.g.opts.Store.KB(), Resolver: &vault.Resolver{Vault: rl.g.opts.Vault, Masks: rl.g.masks}, Breaker: instances.Breaker{Log: rl.g.log}}); err != nil {
		return nil, err
	}
	return l, nil
}

// Reload makes cfg (nil: the configuration in use) the gateway's, with the
// store's connectors and upstreams as they are now. A configuration that
// does not build is refused whole, and the one in use goes on serving.
// Clients keep their sessions and get notifications/tools/list_changed
// when their tools changed; calls in flight finish as they started.
func (g *Gateway) Reload(ctx context.Context, cfg *config.File) error {
	return g.reloader.reload(ctx, cfg)
}

// reloader applies new configurations to its gateway (Reload) and watches
// the store for connectors and upstreams added or removed.
type reloader struct {
	g  *Gateway
	mu sync.Mutex // one reload at a time
	// seen is the fingerprint of the stored connectors and upstreams
	// (sources.StoredFingerprint), taken before they were last read: a change the store
	// takes after it is seen by watchStore, even one made before it runs.
	// Set by New, then by watchStore alone.
	seen string
}

func (rl *reloader) reload(ctx context.Context, cfg *config.File) error {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	g := rl.g
	old := g.now()
	if cfg == nil {
		cfg = old.cfg
	}
	next, err := rl.newLive(ctx, cfg, old)
	if err != nil {
		return err
	}
	udefs, err := sources.UpstreamDefs(ctx, cfg, g.opts.Store)
	if err != nil {
		next.instances.Close(old.instances)
		return err
	}
	changedUps, err := g.upstreams.Apply(ctx, udefs)
	if err != nil {
		next.instances.Close(old.instances)
		return err
	}
	g.live.Store(next)
	pinSecrets(ctx, g, udefs)
	cat, err := g.buildCatalog()
	if err != nil {
		// Only a name collision gets here; the tools it would add stay out.
		g.log.Error("configuration applied but the catalog cannot be rebuilt; keeping the current tools", "error", err)
	} else {
		g.setCatalog(cat, !reflect.DeepEqual(old.cfg.Profiles, cfg.Profiles) || old.cfg.ToolNames != cfg.ToolNames)
	}
	rl.retire(old, next)
	g.log.Info("configuration reloaded", "connectors", len(next.instances), "upstreams", len(g.upstreams.IDs()),
		"upstreams_changed", strings.Join(changedUps, ","), "tools", g.Catalog().Len())
	if keys := config.RestartKeys(g.opts.Config, cfg); len(keys) > 0 {
		g.log.Warn("these settings changed and take effect at the next start", "keys", strings.Join(keys, ", "))
	}
	return nil
}

// retire closes the instances old has and next does not, once the calls
// that may still run on them have had their time.
func (rl *reloader) retire(old, next *live) {
	g := rl.g
	gone := old.instances.Only(next.instances)
	if len(gone) == 0 {
		return
	}
	g.background.Go(func() {
		t := time.NewTimer(old.callTimeout)
		defer t.Stop()
		select {
		case <-t.C:
		case <-g.approvals.Done():
		}
		for _, c := range gone {
			if err := c.Close(); err != nil {
				g.log.Warn("closing a removed connector instance", "error", err)
			}
		}
	})
}

// watchStore reloads when the connectors or upstreams stored change (a
// CLI command or another replica added or removed one), or an instance
// is stale, looking every interval until ctx ends.
func (rl *reloader) watchStore(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := sources.StoredFingerprint(ctx, rl.g.opts.Store)
		if err != nil || (now == rl.seen && !rl.g.now().instances.Stale()) {
			continue
		}
		if err := rl.reload(ctx, nil); err != nil {
			if ctx.Err() == nil {
				rl.g.log.Error("the store's connectors or upstreams changed but cannot be applied; the previous ones go on serving", "error", err)
			}
		}
		rl.seen = now // an invalid change is reported once, not every interval
	}
}

// DefaultStoreWatchInterval is how often a serving gateway looks for
// connectors and upstreams added to or removed from the store.
const DefaultStoreWatchInterval = time.Second
