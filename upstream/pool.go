package upstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/singleflight"
)

// pool is one upstream's sessions: the shared ones, each client's
// (per_client) and each principal's (auth: oauth, principal.go), and the
// backoff after a failure to connect that makes a dead upstream fail fast.
type pool struct {
	u *Upstream

	mu          sync.Mutex         // also guards u.stop
	connecting  singleflight.Group // one connection attempt at a time per key
	shared      []*session
	next        int
	perClient   map[*mcp.ServerSession]*session
	byPrincipal map[string]*session // auth: oauth: sessions by tenant and principal (principal.go)
	connErr     error               // last connection failure
	connAt      time.Time           // when it happened
	backoff     time.Duration
	closed      bool
	dials       sync.WaitGroup // connection attempts under way, which close waits for
}

// sharedSession returns a live shared session, connecting one if the pool
// is not full. A recent connection failure fails fast until its backoff
// ends. The lock is never held while connecting: a slow upstream blocks no
// status report and no other caller.
func (p *pool) sharedSession(ctx context.Context) (*session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("upstream closed")
	}
	p.shared = slices.DeleteFunc(p.shared, func(s *session) bool { return !s.alive() })
	if n := len(p.shared); n >= p.u.cfg.SharedSessions() || n > 0 && p.backingOff() {
		p.next = (p.next + 1) % n
		s := p.shared[p.next]
		p.mu.Unlock()
		return s, nil
	}
	if p.backingOff() {
		err := p.connErr
		p.mu.Unlock()
		return nil, err
	}
	p.mu.Unlock()

	v, err := p.await(ctx, "shared", nil)
	if err != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.shared) > 0 {
			return p.shared[0], nil
		}
		return nil, err
	}
	return v.(*session), nil
}

// drop takes a shared session the upstream no longer has out of the pool
// and closes it.
func (p *pool) drop(s *session) {
	p.mu.Lock()
	p.shared = slices.DeleteFunc(p.shared, func(x *session) bool { return x == s })
	p.mu.Unlock()
	s.cs.Close()
}

// backingOff reports, with p.mu held, whether a recent connection failure
// still holds new connections back.
func (p *pool) backingOff() bool {
	return p.connErr != nil && time.Since(p.connAt) < p.backoff
}

// clientSession returns the session serving owner, connecting it on first
// use; it is closed when the client's session ends.
func (p *pool) clientSession(ctx context.Context, owner *mcp.ServerSession) (*session, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("upstream closed")
	}
	if s, ok := p.perClient[owner]; ok && s.alive() {
		p.mu.Unlock()
		return s, nil
	}
	if p.backingOff() {
		err := p.connErr
		p.mu.Unlock()
		return nil, err
	}
	p.mu.Unlock()

	v, err := p.await(ctx, fmt.Sprintf("client-%p", owner), owner)
	if err != nil {
		return nil, err
	}
	return v.(*session), nil
}

// await joins (or starts) the connection attempt for key and waits for it
// until ctx ends; the attempt itself goes on, for the next caller.
func (p *pool) await(ctx context.Context, key string, owner *mcp.ServerSession) (any, error) {
	ch := p.connecting.DoChan(key, func() (any, error) { return p.dial(owner, true) })
	select {
	case r := <-ch:
		return r.Val, r.Err
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to upstream %s: %w", p.u.cfg.ID, ctx.Err())
	}
}

// dial connects one session within ConnectTimeout (concurrent callers
// share the result, whatever their own contexts), and keeps the failure
// backoff (doubling from 250ms to 30s) so a dead upstream fails fast.
func (p *pool) dial(owner *mcp.ServerSession, register bool) (*session, error) {
	done, err := p.dialing()
	if err != nil {
		return nil, err
	}
	defer done()
	// Not the caller's context: the session outlives the call, and the
	// caller's context carries values of the client's request (its protocol
	// version, for one) the SDK would send on to the upstream.
	cctx, cancel := context.WithTimeout(p.u.m.ctx, p.u.m.opts.ConnectTimeout)
	defer cancel()
	s, err := p.u.connect(cctx, owner)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.connErr, p.connAt = err, time.Now()
		switch {
		case p.backoff == 0:
			p.backoff = 250 * time.Millisecond
		case p.backoff < 30*time.Second:
			p.backoff *= 2
		}
		return nil, err
	}
	if p.closed {
		s.cs.Close()
		return nil, errors.New("upstream closed")
	}
	if p.connErr != nil {
		// Back after a failure (a restarted process): its tools may differ.
		// A per_client upstream lists them on the client's new session (one
		// process per client session); a listing session is listing already.
		switch {
		case p.u.cfg.Session != SessionPerClient:
			p.u.m.refreshVia(p.u.cfg.ID, nil)
		case owner != nil:
			p.u.m.refreshVia(p.u.cfg.ID, s)
		}
	}
	p.connErr, p.backoff = nil, 0
	// The session is registered here, not by the caller, who may have
	// stopped waiting: every session connected is owned, and Close ends it.
	// An unregistered one (a short listing session) its caller closes.
	if !register {
		return s, nil
	}
	if owner == nil {
		p.shared = append(p.shared, s)
		return s, nil
	}
	p.perClient[owner] = s
	p.keep(s, p.u.m.ends.Of(owner), func() {
		if p.perClient[owner] == s {
			delete(p.perClient, owner)
		}
	})
	return s, nil
}

// keep closes a registered session s once it ends, until is closed, or
// the manager closes, and then forgets it with forget (p.mu held).
func (p *pool) keep(s *session, until <-chan struct{}, forget func()) {
	p.u.m.wg.Go(func() {
		select {
		case <-s.done:
		case <-until:
		case <-p.u.m.ctx.Done():
		}
		p.mu.Lock()
		forget()
		p.mu.Unlock()
		s.cs.Close()
		<-s.done
	})
}

// dialing counts a connection attempt in, for close to wait for: one still
// inside the SDK's connect when the manager closes (an event stream being
// opened, say) would outlive it otherwise. Refused once the pool is closed.
func (p *pool) dialing() (done func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("upstream closed")
	}
	p.dials.Add(1)
	return p.dials.Done, nil
}

// session picks the session a call from client uses.
func (p *pool) session(ctx context.Context, client Client) (*session, error) {
	if p.u.cfg.Session == SessionPerClient && client.Session != nil {
		return p.clientSession(ctx, client.Session)
	}
	if p.u.cfg.OAuthProtected() {
		return principalSession(ctx, p.u, client)
	}
	return p.sharedSession(ctx)
}

// close ends every session, and waits for the connection attempts under
// way (their context ends with the manager's).
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	sessions := append([]*session{}, p.shared...)
	for _, s := range p.perClient {
		sessions = append(sessions, s)
	}
	for _, s := range p.byPrincipal {
		sessions = append(sessions, s)
	}
	p.shared, p.perClient, p.byPrincipal = nil, map[*mcp.ServerSession]*session{}, map[string]*session{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { s.cs.Close(); <-s.done })
	}
	wg.Wait()
	p.dials.Wait()
	if p.u.http != nil {
		p.u.http.CloseIdleConnections()
	}
}

// sessions counts open sessions, for status and tests.
func (p *pool) sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, s := range p.shared {
		if s.alive() {
			n++
		}
	}
	for _, s := range p.perClient {
		if s.alive() {
			n++
		}
	}
	return n
}

// sessionByID finds a session by its Mcp-Session-Id.
func (p *pool) sessionByID(id string) *session {
	if id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.shared {
		if s.cs != nil && s.cs.ID() == id {
			return s
		}
	}
	for _, s := range p.perClient {
		if s.cs != nil && s.cs.ID() == id {
			return s
		}
	}
	return nil
}

// retryAfter is the current reconnection backoff (at least 250ms).
func (p *pool) retryAfter() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.backoff == 0 {
		p.backoff = 250 * time.Millisecond
	}
	return p.backoff
}

// sharedDone is closed when the first live shared session ends; nil when
// there is none to watch (per_client upstreams).
func (p *pool) sharedDone() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.shared {
		if s.alive() {
			return s.done
		}
	}
	return nil
}
