// Package upstream connects Legate to upstream MCP servers — remote
// (Streamable HTTP, legacy SSE) or local (stdio) — whose tools it
// discovers, caches in the store and re-exports as mcp.<id>.<tool>.
//
// Serving tools/list never calls an upstream: the catalog is built from the
// cache, which is refreshed when an upstream is added or tested, by
// `legate upstream refresh` (even with no server running: a running server
// polls the store and picks the change up), on the upstream's
// notifications/tools/list_changed, after a stdio upstream restarts, and
// every refresh_interval. A down upstream keeps its cached tools listed;
// calls to it fail fast with UPSTREAM_UNAVAILABLE.
//
// Each upstream is isolated: its own sessions and HTTP connection pool, a
// circuit breaker, a bound on calls in flight and a per-call timeout that
// progress extends.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/cache"
	"github.com/legate-mcp/legate/upstream/dial"
	"github.com/legate-mcp/legate/upstream/discovery"
	"github.com/legate-mcp/legate/upstream/upconfig"
	"github.com/legate-mcp/legate/vault"
)

// Options configure a Manager.
type Options struct {
	// Store keeps the tool caches; required.
	Store store.UpstreamStore
	// Pins keeps the accepted definitions; required.
	Pins store.PinStore
	// OnQuarantine is called once per changed definition put in quarantine.
	OnQuarantine func(q Quarantined)
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
	// Version is sent to upstreams as the client version.
	Version string
	// LookupEnv resolves header_env (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Resolve resolves token and headers when a session opens (upconfig.Config.ResolveHeaders).
	Resolve func(ctx context.Context, tenant string, ref vault.Ref) (string, error)
	// OnToolsChanged is called after the set of cached tools changed.
	OnToolsChanged func()
	// OnResourceUpdated relays an upstream's resources/updated.
	OnResourceUpdated func(context.Context, *mcp.ResourceUpdatedNotificationParams)
	// Authorize, for an upstream with auth: oauth, is the transport of
	// principal's session: base, with the principal's own token set on
	// each request (nil: such an upstream cannot be called).
	Authorize func(id, tenant, principal string, base http.RoundTripper) http.RoundTripper
	// ConnectTimeout bounds connecting and initializing (default 10s).
	ConnectTimeout time.Duration
	// BreakerFailures opens an upstream's circuit after this many
	// consecutive failures (default circuit.DefaultFailures).
	BreakerFailures int
	// BreakerCooldown is how long a circuit stays open before one probe
	// call is let through (default circuit.DefaultCooldown).
	BreakerCooldown time.Duration
	// PollInterval is how often the store is checked for refreshes made by
	// another process (default 2s).
	PollInterval time.Duration
	// MaxResultBytes bounds one message from an upstream whose config sets
	// no max_result_bytes (default upconfig.DefaultMaxResultBytes).
	MaxResultBytes int64
}

// Def is one upstream to manage, with where it was defined.
type Def struct {
	Config Config
	// Origin says where, for people: "config.yaml upstreams[0]" or "the store".
	Origin string
}

// Manager owns every upstream.
type Manager struct {
	opts Options
	log  *slog.Logger

	// set is the upstreams in use: replaced whole by Apply, read without
	// a lock by every call.
	set     atomic.Pointer[upstreamSet]
	applyMu sync.Mutex // serializes Apply
	started bool       // Start ran: Apply starts what it adds (under applyMu)

	version   string
	cacheVer  atomic.Int64
	toolsHash atomic.Value // string: fingerprint of the current tool set

	quarantine atomic.Pointer[[]Quarantined]
	reported   sync.Map // "upstream/tool/hash" → struct{}: quarantines already reported

	ends *dial.ClientEnds
	held *rounds.Holder // calls waiting for a 2026-07-28 client's input

	reloadMu   sync.Mutex // serializes reload
	refreshing sync.Map   // id, or *session listed on → struct{}: a refresh is queued or running
	// ctx ends at Close; every goroutine the manager starts runs under it
	// and is counted in wg, so none outlives Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewManager validates the definitions and loads their cached tools. It
// does no network I/O.
func NewManager(ctx context.Context, defs []Def, opts Options) (*Manager, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = upconfig.DefaultMaxResultBytes
	}
	m := &Manager{
		opts: opts, log: opts.Logger, version: opts.Version,
		ends: dial.NewClientEnds(),
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.held = rounds.NewHolder(rounds.MaxHeld, rounds.HeldTTL, m.wg.Go)
	if m.version == "" {
		m.version = "dev"
	}
	set, _, err := m.plan(&upstreamSet{}, defs)
	if err != nil {
		return nil, err
	}
	m.set.Store(set)
	empty := []Quarantined{}
	m.quarantine.Store(&empty)
	if _, err := m.reload(ctx); err != nil {
		return nil, err
	}
	caches, err := m.opts.Store.Cache(ctx)
	if err != nil {
		return nil, err
	}
	for id, u := range set.byID {
		if caches[id].RefreshedAt.IsZero() {
			u.first = discovery.NewFirst()
		}
	}
	return m, nil
}

// WaitListed waits until every upstream never listed before the manager
// was made (its cache empty) has been tried once since Start, listed or
// failed, or until ctx ends: a first tools/list after a cold start can
// hold the upstreams' tools for clients that ignore list_changed.
func (m *Manager) WaitListed(ctx context.Context) error {
	for _, id := range m.IDs() {
		u, ok := m.Upstream(id)
		if !ok || u.first == nil {
			continue
		}
		select {
		case <-u.first.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// upstreamSet is the upstreams in use, by id and in id order.
type upstreamSet struct {
	byID  map[string]*Upstream
	order []string
}

// plan builds the set defs describe from cur: an upstream whose
// definition is unchanged is kept as it is (its sessions, circuit and
// processes); a new or changed one is built anew. gone are the upstreams
// of cur the new set no longer holds. Duplicate ids are an error.
func (m *Manager) plan(cur *upstreamSet, defs []Def) (next *upstreamSet, gone []*Upstream, err error) {
	next = &upstreamSet{byID: map[string]*Upstream{}}
	var errs []error
	for _, d := range defs {
		cfg := d.Config
		if prev, dup := next.byID[cfg.ID]; dup {
			errs = append(errs, fmt.Errorf("upstream id %q is defined twice: in %s and in %s", cfg.ID, prev.origin, d.Origin))
			continue
		}
		u, ok := cur.byID[cfg.ID]
		if !ok || !reflect.DeepEqual(*u.cfg, cfg) {
			u = newUpstream(m, &cfg, d.Origin)
			if u.headerErr != nil {
				m.log.Error("upstream unusable", "upstream", cfg.ID, "error", u.headerErr)
			}
		}
		next.byID[cfg.ID] = u
		next.order = append(next.order, cfg.ID)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	slices.Sort(next.order)
	for id, u := range cur.byID {
		if next.byID[id] != u {
			gone = append(gone, u)
		}
	}
	return next, gone, nil
}

// Apply makes defs the upstreams in use, as a running server does when
// its configuration or the store's upstreams change: new and changed
// upstreams are built, loaded from the cache and (once Start ran) started;
// removed and replaced ones are stopped once the calls they are running
// end; unchanged ones go on untouched. It reports the ids added, changed
// or removed. Invalid defs change nothing.
func (m *Manager) Apply(ctx context.Context, defs []Def) ([]string, error) {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	cur := m.set.Load()
	next, gone, err := m.plan(cur, defs)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, id := range next.order {
		if cur.byID[id] != next.byID[id] {
			changed = append(changed, id)
		}
	}
	for _, u := range gone {
		if next.byID[u.cfg.ID] == nil {
			changed = append(changed, u.cfg.ID)
		}
	}
	if len(changed) == 0 {
		return nil, nil
	}
	m.set.Store(next)
	if _, err := m.reload(ctx); err != nil {
		m.log.Warn("reading the tool caches of changed upstreams", "error", err)
	}
	if m.started {
		for _, id := range next.order {
			if u := next.byID[id]; cur.byID[id] != u {
				m.startOne(u)
			}
		}
	}
	for _, u := range gone {
		m.wg.Go(func() { m.retire(u) })
	}
	slices.Sort(changed)
	return changed, nil
}

// Start runs the background work until Close: a first refresh of every
// upstream, reconnection of stdio upstreams that exit, refresh_interval,
// and polling the store for refreshes made elsewhere.
func (m *Manager) Start(ctx context.Context) {
	context.AfterFunc(ctx, m.cancel)
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	m.started = true
	set := m.set.Load()
	for _, id := range set.order {
		m.startOne(set.byID[id])
	}
	m.wg.Go(func() {
		discovery.Poll(m.ctx, m.opts.PollInterval, m.opts.Store.CacheVersion, m.cacheVer.Load, m.reload, m.log)
	})
}

// startOne starts u's supervision, which its retirement ends.
func (m *Manager) startOne(u *Upstream) {
	ctx, stop := context.WithCancel(m.ctx)
	u.pool.mu.Lock()
	u.stop = stop
	u.pool.mu.Unlock()
	m.wg.Go(func() { u.supervise(ctx) })
}

// Close stops the background work and ends every session and process.
func (m *Manager) Close() {
	m.cancel()
	var wg sync.WaitGroup
	for _, u := range m.set.Load().byID {
		wg.Go(u.pool.close)
	}
	wg.Wait()
	m.wg.Wait() // after the pools: a connection finishing late keeps its session with m.wg
}

// Upstream returns the upstream with that id.
func (m *Manager) Upstream(id string) (*Upstream, bool) {
	u, ok := m.set.Load().byID[id]
	return u, ok
}

// IDs returns the upstream ids, sorted.
func (m *Manager) IDs() []string { return m.set.Load().order }

// Tools returns every upstream's cached tools that pass its filter.
func (m *Manager) Tools() []*Tool {
	var out []*Tool
	set := m.set.Load()
	for _, id := range set.order {
		out = append(out, *set.byID[id].tools.Load()...)
	}
	return out
}

// Call forwards a call to t's upstream.
func (m *Manager) Call(ctx context.Context, t *Tool, args json.RawMessage, client Client) (*mcp.CallToolResult, error) {
	u, ok := m.Upstream(t.Upstream)
	if !ok {
		return nil, unavailable(t.Upstream, "no longer configured", nil)
	}
	a, err := u.callRounds(ctx, t, args, client, false)
	return a.res, err
}

// Refresh lists the upstream's tools now, stores them and returns what changed.
func (m *Manager) Refresh(ctx context.Context, id string) (Diff, error) {
	u, ok := m.Upstream(id)
	if !ok {
		return Diff{}, fmt.Errorf("no upstream %q", id)
	}
	return m.refresh(ctx, u, nil)
}

// refresh lists u's tools (on via when it is set: see list), caches them
// and reloads the catalog (cache.Refresh).
func (m *Manager) refresh(ctx context.Context, u *Upstream, via *session) (Diff, error) {
	return cache.Refresh(ctx, m.opts.Store, u.cfg.ID, func(ctx context.Context) ([]*mcp.Tool, []string, error) { return u.list(ctx, via) },
		func() bool { return ctx.Err() != nil || via != nil && !via.alive() },
		func(rows []store.CachedTool) error { _, err := m.reloadOne(ctx, u, rows); return err }, m.log)
}

// list fetches every page of the upstream's tools, and the URIs of its
// resources when it has some (an empty, non-nil list otherwise). It lists
// on via when set: the per_client session whose process said its tools
// changed, so that no other process is started for it (one process per
// client session).
func (u *Upstream) list(ctx context.Context, via *session) ([]*mcp.Tool, []string, error) {
	s := via
	var err error
	switch {
	case via != nil:
		// It may have announced the change while still connecting.
		select {
		case <-via.ready:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if via.cs == nil || !via.alive() {
			return nil, nil, fmt.Errorf("upstream %s: the session that announced a tool change has ended", u.cfg.ID)
		}
	case u.cfg.OAuthProtected():
		if s = anyPrincipalSession(u); s == nil {
			return nil, nil, fmt.Errorf("upstream %s acts as each caller and no principal has a session to list its tools through yet: its tools are listed once someone connects it", u.cfg.ID)
		}
	case u.cfg.Session == SessionPerClient:
		// Per-client upstreams keep no shared session: list on a short one.
		s, err = u.pool.dial(nil, false)
		if err == nil {
			defer s.cs.Close()
		}
	default:
		s, err = u.pool.sharedSession(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	return discovery.List(ctx, s.cs, u.cfg.ID, u.cfg.CallTimeout(), u.log)
}

// reload reads the caches and pins from the store into each upstream,
// pins new definitions on first sight (pin: tofu), quarantines changed
// ones, and reports whether the tool set changed (then OnToolsChanged is
// called).
func (m *Manager) reload(ctx context.Context) (bool, error) {
	// One at a time: a reload that read the store earlier must not finish
	// last and put back an older tool set.
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	ver, err := m.opts.Store.CacheVersion(ctx)
	if err != nil {
		return false, err
	}
	all, err := m.opts.Store.Cache(ctx)
	if err != nil {
		return false, err
	}
	pins, err := m.opts.Pins.List(ctx)
	if err != nil {
		return false, err
	}
	m.cacheVer.Store(ver)
	set := m.set.Load()
	for _, id := range set.order {
		if err := m.load(ctx, set.byID[id], all[id].Tools, pins[id]); err != nil {
			return false, err
		}
	}
	return m.publish(), nil
}

// reloadOne takes one upstream's freshly cached rows, leaving the others
// as they are (a refresh need not re-read every upstream's cache).
func (m *Manager) reloadOne(ctx context.Context, u *Upstream, rows []store.CachedTool) (bool, error) {
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	pins, err := m.opts.Pins.List(ctx)
	if err != nil {
		return false, err
	}
	if err := m.load(ctx, u, rows, pins[u.cfg.ID]); err != nil {
		return false, err
	}
	return m.publish(), nil
}

// refreshVia refreshes an upstream in the background, listing on via when
// it is set (see list), once however many times it is asked while one is
// queued or running (for via, while one is on that session).
func (m *Manager) refreshVia(id string, via *session) {
	u, ok := m.Upstream(id)
	if !ok {
		return
	}
	key := any(id)
	if via != nil {
		key = via
	}
	if _, busy := m.refreshing.LoadOrStore(key, struct{}{}); busy {
		return
	}
	m.wg.Go(func() {
		defer m.refreshing.Delete(key)
		ctx, cancel := context.WithTimeout(m.ctx, u.cfg.CallTimeout())
		defer cancel()
		d, err := m.refresh(ctx, u, via)
		if err != nil {
			// Not a failure when the manager closes (a CLI command that
			// is done) or the client session listed on has ended.
			if m.ctx.Err() == nil && (via == nil || via.alive()) {
				u.log.Warn("refreshing tools", "error", err)
			}
			return
		}
		if !d.Empty() {
			u.log.Info("upstream tools changed", "diff", d.String())
		}
	})
}

// supervise refreshes the upstream (discovery.Loop) until ctx ends.
func (u *Upstream) supervise(ctx context.Context) {
	defer u.first.Done() // supervision ended: no first listing to wait for
	if u.cfg.OAuthProtected() {
		return // listed through its principals' sessions (principal.go)
	}
	discovery.Loop{
		Every:   time.Duration(u.cfg.RefreshInterval),
		Refresh: func(ctx context.Context) (Diff, error) { return u.m.refresh(ctx, u, nil) },
		Tried:   u.first.Done, Backoff: u.pool.retryAfter, Ended: u.pool.sharedDone, Log: u.log,
	}.Run(ctx)
}
