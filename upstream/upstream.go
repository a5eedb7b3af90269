package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/circuit"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/upstream/dial"
	"github.com/legate-mcp/legate/upstream/discovery"
	"github.com/legate-mcp/legate/upstream/maskhttp"
	"github.com/legate-mcp/legate/upstream/msglimit"
	"github.com/legate-mcp/legate/upstream/relay"
	"github.com/legate-mcp/legate/upstream/uptasks"
)

// Upstream is one upstream MCP server: its sessions, its circuit breaker,
// its concurrency bound and its cached tools.
type Upstream struct {
	cfg        *Config
	origin     string
	m          *Manager
	log        *slog.Logger
	http       *http.Client
	tappedHTTP *http.Client      // http, with event streams tapped (relay.TapTransport)
	headerErr  error             // header_env unresolved: every connection fails with it
	creds      *dial.Credentials // header_env, token and headers: masked in all the upstream returns

	breaker *gobreaker.CircuitBreaker[answer]
	slots   chan struct{} // bounds calls in flight

	pool pool               // its sessions
	stop context.CancelFunc // ends supervise; nil until started (under pool.mu)

	// first, for an upstream with no cache at start, is done once its
	// first listing was tried (WaitListed); nil when there was a cache.
	first *discovery.First

	tools       atomic.Pointer[[]*Tool]       // from the cache, filtered, accepted
	quarantined atomic.Pointer[[]Quarantined] // from the cache, changed since accepted

	calls   sync.Map // progress token (string) → *pendingCall
	tokenID atomic.Uint64

	lastFailure atomic.Pointer[failure] // the last call the breaker counted as failed
	tasks       *uptasks.Tools          // its task-required tools, as its listings say
}

// failure is a call's failure as the breaker counted it: its masked text
// and when.
type failure struct {
	text string
	at   time.Time
}

// pendingCall routes what an upstream sends during a call to the client
// that made it.
type pendingCall struct {
	// ctx is the client request's context: messages sent with it travel on
	// that request's response stream, where the client expects them.
	ctx    context.Context
	client Client
	extend func() // restarts the call's timeout
}

// Client is the downstream side of a forwarded call.
type Client struct {
	// Session is the client's session; nil for calls from the CLI.
	Session *mcp.ServerSession
	// ProgressToken is the client's token; nil if it asked for no progress.
	ProgressToken any
	// Progress, when set, is given the progress relayed to the client
	// (under the client's token) in place of Session.NotifyProgress: for a
	// front door that writes the call's response stream itself.
	Progress func(*mcp.ProgressNotificationParams)
	// Tenant is the authenticated caller's tenant; with Scoped, only shared
	// upstreams and those of Tenant are visible to it.
	Tenant string
	Scoped bool
	// Principal is the caller, whose session and token a call to an
	// upstream with auth: oauth uses.
	Principal string
	// Round is set for a client of protocol 2026-07-28, which answers an
	// upstream's input requests itself, by retrying (rounds.go); ask
	// answers them for a call Legate holds meanwhile.
	Round *rounds.Round
	// Tasks: the caller hands an upstream's tasks through to the client
	// (package tasks), so a call sent as bytes to a stateless upstream
	// keeps the tasks extension the client's Round declares, and may be
	// answered with a task (resultType task).
	Tasks bool
	ask   func(context.Context, mcp.InputRequest) (json.RawMessage, error)
}

// Visible reports whether the client may see upstream id.
func (m *Manager) Visible(id string, c Client) bool {
	u, ok := m.Upstream(id)
	return ok && (!c.Scoped || u.cfg.Tenant == "" || u.cfg.Tenant == c.Tenant)
}

// errTimeout is the cause of a call cancelled by its timeout.
var errTimeout = errors.New("upstream call timed out")

func newUpstream(m *Manager, cfg *Config, origin string) *Upstream {
	u := &Upstream{
		cfg: cfg, origin: origin, m: m,
		log: m.log.With("upstream", cfg.ID), tasks: uptasks.NewTools(cfg.ID),
		slots: make(chan struct{}, cfg.Concurrency()),
	}
	u.pool = pool{u: u, perClient: map[*mcp.ServerSession]*session{}, byPrincipal: map[string]*session{}}
	if cfg.URL != "" {
		h, err := cfg.EnvHeaders(m.opts.LookupEnv)
		u.headerErr = err
		u.creds = dial.NewCredentials(h, cfg.HasCredentialRefs())
		u.http = dial.NewHTTPClient(cfg.Concurrency(), h, u.creds)
		if !u.creds.Secrets().Empty() || cfg.HasCredentialRefs() {
			u.http.Transport = &maskhttp.Transport{Base: u.http.Transport, Current: u.creds.Secrets}
		}
		u.tappedHTTP = &http.Client{Transport: &relay.TapTransport{Base: u.tasks.Watch(u.limited()), Tap: u.tap(nil)}}
	}
	u.breaker = circuit.New[answer](circuit.Settings{
		Name: cfg.ID, Failures: m.opts.BreakerFailures, Cooldown: m.opts.BreakerCooldown, Log: u.log,
		// Only the upstream's own failures count: a JSON-RPC error is an
		// answer, and a call the client cancelled says nothing of health;
		// nor does an answer over max_result_bytes, nor a caller who has
		// not connected an OAuth-protected one.
		Healthy: func(err error) bool {
			return relay.Answered(err) || errors.Is(err, context.Canceled) || msglimit.IsTooLarge(err) || legate.CodeOf(err) == legate.CodeNotConnected
		},
		Failed: func(err error) {
			u.lastFailure.Store(&failure{text: u.creds.Secrets().MaskString(err.Error()), at: time.Now()})
		},
	})
	empty := []*Tool{}
	u.tools.Store(&empty)
	none := []Quarantined{}
	u.quarantined.Store(&none)
	return u
}

// Origin says where the upstream is defined.
func (u *Upstream) Origin() string { return u.origin }

// Config returns the upstream's definition.
func (u *Upstream) Config() *Config { return u.cfg }

// Circuit returns the breaker's state: closed, half-open or open.
func (u *Upstream) Circuit() string { return u.breaker.State().String() }

// answer is a call's result: the SDK's decoding of it, or (relayed) its
// JSON as the upstream sent it.
type answer struct {
	res *mcp.CallToolResult
	rel Relayed
}

// call forwards one call to t; asBytes, as bytes where it can (relay.go).
func (u *Upstream) call(ctx context.Context, t *Tool, args json.RawMessage, client Client, asBytes bool) (answer, error) {
	select {
	case u.slots <- struct{}{}:
		defer func() { <-u.slots }()
	case <-ctx.Done():
		return answer{}, unavailable(u.cfg.ID, "too many calls in flight", ctx.Err())
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	ctx = relay.Replayable(ctx, t.Class) // a read is sent again if a pooled connection closes under it
	a, err := u.breaker.Execute(func() (answer, error) {
		// A relayed call that finds its session gone (the upstream
		// restarted, forgetting every session of the pool) is sent again on
		// another, a new one at the latest: the upstream did not take it.
		for tries := 1; ; tries++ {
			s, err := u.pool.session(ctx, client)
			if err != nil {
				return answer{}, err
			}
			envelope, raw := u.enveloped(s, client) && s.relayableOn(t), asBytes && u.relayable() && s.relayableOn(t) && !s.tasks.Required(t.Name)
			var a answer
			switch {
			case client.Round != nil && s.owner == nil && (!envelope && !raw || rounds.IsHeld(client.Round.State)):
				a, err = u.callHeld(ctx, s, t.Name, args, client)
			case !envelope && !raw:
				a.res, err = u.callOn(ctx, s, t.Name, args, client)
				return a, err
			default:
				a, err = u.relay(ctx, s, t.Name, args, client)
			}
			if err == nil && !asBytes && a.rel.JSON != nil {
				// The SDK's path wants the result decoded.
				if res, ok := rounds.Decode(a.rel.JSON, a.rel.InputRequired); ok {
					return answer{res: res}, nil
				}
				var res mcp.CallToolResult
				err = json.Unmarshal(a.rel.JSON, &res)
				return answer{res: &res}, err
			}
			if errors.Is(err, relay.ErrSessionGone) {
				u.pool.drop(s)
				if tries <= u.cfg.SharedSessions() {
					continue
				}
			}
			return a, err
		}
	})
	switch {
	case err == nil && a.res != nil:
		return answer{res: maskhttp.Result(u.creds.Secrets(), a.res)}, nil
	case err == nil:
		if masked, ok := maskhttp.Raw(u.creds.Secrets(), a.rel.JSON); ok {
			a.rel = relay.Of(masked)
		}
		return answer{rel: a.rel}, nil
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		return answer{}, unavailable(u.cfg.ID, "circuit open after repeated failures; retry later", err)
	case legate.CodeOf(err) == legate.CodeNotConnected:
		return answer{}, err
	case errors.Is(err, errTimeout):
		return answer{}, &legate.Error{Code: legate.CodeTimeout, Message: fmt.Sprintf("upstream %s did not answer within %s", u.cfg.ID, u.cfg.CallTimeout()), Err: err}
	case msglimit.IsTooLarge(err):
		return answer{}, msglimit.ToolError(t.Canonical(), u.maxResult(), u.cfg.ID, err)
	}
	if relay.Answered(err) {
		return answer{}, maskhttp.Err(u.creds.Secrets(), err)
	}
	if errors.Is(err, context.Canceled) {
		return answer{}, err
	}
	return answer{}, unavailable(u.cfg.ID, u.creds.Secrets().MaskString(err.Error()), err)
}

// call is one call under way on a session.
type call struct {
	// ctx is the upstream request's own context, cancelled when the
	// client's is or the timeout passes — but not once the answer is in:
	// cancelling then would cut the connection before the response stream
	// ends, and the next call would pay for a new one.
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer // the timeout, which each progress notification restarts
	// token routes the upstream's progress to the client (pendingCall).
	token string
	end   func()      // unregisters the call
	stop  func() bool // detaches it from the client's request (end does too)
}

// begin registers a call from client on session s.
func (u *Upstream) begin(ctx context.Context, s *session, client Client) *call {
	c := &call{token: "legate-" + strconv.FormatUint(u.tokenID.Add(1), 10)}
	c.ctx, c.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	c.stop = context.AfterFunc(ctx, func() { c.cancel(context.Cause(ctx)) })
	timeout := u.cfg.CallTimeout()
	c.timer = time.AfterFunc(timeout, func() { c.cancel(errTimeout) })
	pc := &pendingCall{ctx: ctx, client: client, extend: func() { c.timer.Reset(timeout) }}
	u.calls.Store(c.token, pc)
	s.inflight.Store(c.token, pc)
	c.end = func() {
		c.stop()
		u.calls.Delete(c.token)
		s.inflight.Delete(c.token)
	}
	return c
}

// failed ends a call that failed with err and returns the error to report:
// errTimeout or the client's cancellation when either ended it.
func (c *call) failed(err error) error {
	c.timer.Stop()
	cause := context.Cause(c.ctx)
	c.cancel(err)
	if cause != nil {
		return cause
	}
	return err
}

// callOn makes the call on one session through the SDK client.
func (u *Upstream) callOn(ctx context.Context, s *session, name string, args any, client Client) (*mcp.CallToolResult, error) {
	c := u.begin(ctx, s, client)
	defer c.end()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if r := client.Round; r != nil {
		if err := rounds.SetParams(params, r); err != nil {
			return nil, c.failed(err)
		}
	}
	if client.ProgressToken != nil {
		params.SetProgressToken(c.token)
	}
	res, err := s.tasks.CallTool(c.ctx, s.cs, params, uptasks.Caller{Token: c.token, Progress: u.relayProgress, CanAsk: client.ask != nil || client.Session != nil})
	if err != nil {
		return nil, c.failed(err)
	}
	c.timer.Stop()
	return res, nil // c.ctx is left to the response stream; nothing else holds it
}

// relayProgress forwards an upstream's progress to the calling client,
// under the client's own token, and extends the call's timeout.
func (u *Upstream) relayProgress(p *mcp.ProgressNotificationParams) {
	token, _ := p.ProgressToken.(string)
	v, ok := u.calls.Load(token)
	if !ok {
		return
	}
	pc := v.(*pendingCall)
	pc.extend()
	if pc.client.ProgressToken == nil {
		return
	}
	out := *p
	out.ProgressToken = pc.client.ProgressToken
	if pc.client.Progress != nil {
		pc.client.Progress(&out)
		return
	}
	if pc.client.Session == nil {
		return
	}
	if err := pc.client.Session.NotifyProgress(pc.ctx, &out); err != nil {
		u.log.Debug("relaying progress", "error", err)
	}
}

// retire ends an upstream no longer in use: its supervision at once, its
// sessions and processes once the calls it is running end (bounded by
// its timeout), so that a reload never cuts a call short.
func (m *Manager) retire(u *Upstream) {
	u.pool.mu.Lock()
	stop := u.stop
	u.pool.mu.Unlock()
	if stop != nil {
		stop()
	}
	drained := time.NewTimer(u.cfg.CallTimeout())
	defer drained.Stop()
	for range cap(u.slots) {
		select {
		case u.slots <- struct{}{}: // a slot no call holds
		case <-drained.C:
			u.pool.close()
			return
		case <-m.ctx.Done():
			u.pool.close()
			return
		}
	}
	u.pool.close()
}

func unavailable(id, msg string, err error) error {
	return &legate.Error{Code: legate.CodeUpstreamUnavailable, Message: fmt.Sprintf("upstream %s is unavailable: %s", id, msg), Err: err}
}

// Session returns the upstream session that client uses, connecting it if
// needed, for requests other than tool calls (prompts, resources,
// completion). It fails fast while the upstream's circuit is open.
func (m *Manager) Session(ctx context.Context, id string, client Client) (*mcp.ClientSession, error) {
	u, ok := m.Upstream(id)
	if !ok {
		return nil, fmt.Errorf("no upstream %q", id)
	}
	if u.breaker.State() == gobreaker.StateOpen {
		return nil, unavailable(id, "circuit open after repeated failures; retry later", nil)
	}
	s, err := u.pool.session(ctx, client)
	if err != nil {
		return nil, unavailable(id, err.Error(), err)
	}
	return s.cs, nil
}
