package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream/msglimit"
	"github.com/legate-mcp/legate/upstream/relay"
)

// An upstream with auth: oauth acts as each caller: a principal's calls go
// through a session of its own whose requests carry the principal's token
// (Options.Authorize); its tools are listed through the first principal's
// session (ConnectedAs). A caller who has not connected it gets the
// NOT_CONNECTED error of Authorize's transport: no failure of the upstream.

func principalKey(c Client) string { return c.Tenant + "\x00" + c.Principal }

// principalSession returns the session of client's principal, connecting
// it on first use; a failure to connect is the principal's alone (no
// backoff of the upstream).
func principalSession(ctx context.Context, u *Upstream, c Client) (*session, error) {
	if u.m.opts.Authorize == nil {
		return nil, unavailable(u.cfg.ID, "it is OAuth-protected and this gateway has no per-user connections", nil)
	}
	key := principalKey(c)
	u.pool.mu.Lock()
	s, ok := u.pool.byPrincipal[key]
	u.pool.mu.Unlock()
	if ok && s.alive() {
		return s, nil
	}
	ch := u.pool.connecting.DoChan("principal-"+key, func() (any, error) { return dialPrincipal(u, c) })
	select {
	case r := <-ch:
		s, _ := r.Val.(*session)
		return s, r.Err
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to upstream %s: %w", u.cfg.ID, ctx.Err())
	}
}

// dialPrincipal connects c's principal's session, kept until it ends;
// the first one of an upstream never listed lists its tools.
func dialPrincipal(u *Upstream, c Client) (*session, error) {
	done, err := u.pool.dialing()
	if err != nil {
		return nil, err
	}
	defer done()
	cctx, cancel := context.WithTimeout(u.m.ctx, u.m.opts.ConnectTimeout)
	defer cancel()
	rt := u.m.opts.Authorize(u.cfg.ID, c.Tenant, c.Principal, u.http.Transport)
	hc := &http.Client{Transport: rt}
	tapped := &http.Client{Transport: &relay.TapTransport{Base: u.tasks.Watch(msglimit.Transport(rt, u.maxResult())), Tap: u.tap(nil)}}
	s, err := u.connect(cctx, nil, hc, tapped)
	if le := (*legate.Error)(nil); errors.As(err, &le) && le.Code == legate.CodeNotConnected {
		return nil, le
	} else if err != nil {
		return nil, err
	}
	key := principalKey(c)
	u.pool.mu.Lock()
	if u.pool.closed {
		u.pool.mu.Unlock()
		s.cs.Close()
		return nil, errors.New("upstream closed")
	}
	u.pool.byPrincipal[key] = s
	u.pool.keep(s, nil, func() {
		if u.pool.byPrincipal[key] == s {
			delete(u.pool.byPrincipal, key)
		}
	})
	u.pool.mu.Unlock()
	if st, err := u.m.opts.Store.CacheOf(cctx, u.cfg.ID); err == nil && st.RefreshedAt.IsZero() {
		u.m.refreshVia(u.cfg.ID, s)
	}
	return s, nil
}

// anyPrincipalSession is a live principal's session to list through.
func anyPrincipalSession(u *Upstream) *session {
	u.pool.mu.Lock()
	defer u.pool.mu.Unlock()
	for _, s := range u.pool.byPrincipal {
		if s.alive() {
			return s
		}
	}
	return nil
}

// ConnectedAs tells the manager that principal of tenant has connected
// the OAuth-protected upstream id: a session of the principal's previous
// connection ends (a server may hold a session to the token that opened
// it), and a new one is connected now, in the background, so that the
// upstream's tools are listed if they never were.
func (m *Manager) ConnectedAs(id, tenant, principal string) {
	u, ok := m.Upstream(id)
	if !ok || !u.cfg.OAuthProtected() {
		return
	}
	key := principalKey(Client{Tenant: tenant, Principal: principal})
	u.pool.mu.Lock()
	old := u.pool.byPrincipal[key]
	delete(u.pool.byPrincipal, key)
	u.pool.mu.Unlock()
	if old != nil {
		old.cs.Close()
	}
	m.wg.Go(func() {
		ctx, cancel := context.WithTimeout(m.ctx, m.opts.ConnectTimeout+time.Second)
		defer cancel()
		if _, err := principalSession(ctx, u, Client{Tenant: tenant, Principal: principal}); err != nil && m.ctx.Err() == nil {
			u.log.Warn("connecting a principal's session", "principal", principal, "error", err)
		}
	})
}
