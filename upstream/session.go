package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/upstream/dial"
	"github.com/legate-mcp/legate/upstream/msglimit"
	"github.com/legate-mcp/legate/upstream/relay"
	"github.com/legate-mcp/legate/upstream/uptasks"
)

// session is one connected upstream session.
type session struct {
	cs    *mcp.ClientSession // set once connected: read it after ready
	owner *mcp.ServerSession // the client it serves (per_client), nil when shared
	done  chan struct{}      // closed when the session ends
	// ready is closed when connecting ended, cs set or not: an upstream's
	// notification may arrive while the client still initializes.
	ready chan struct{}

	inflight sync.Map // progress token → *pendingCall: the calls under way on it
	// tappedHC, for one principal's session of an upstream with auth:
	// oauth, carries that principal's token (principal.go); nil: the
	// upstream's own client.
	tappedHC *http.Client
	conn     *relay.Conn   // the relay's, for a relayable upstream's session
	tasks    *uptasks.Link // runs its calls to task-required tools (package uptasks)
}

// callContext is the context of a call under way on the session, so that
// what the upstream sends during it (logs, sampling and elicitation
// requests) reaches the client on that call's response stream; without
// one, ctx.
func (s *session) callContext(ctx context.Context) context.Context {
	s.inflight.Range(func(_, v any) bool {
		ctx = v.(*pendingCall).ctx
		return false
	})
	return ctx
}

func (s *session) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// transport builds the MCP transport for session s, tapped so that its
// progress and logs are relayed in wire order (dial.Transport). An HTTP
// upstream's token and headers are resolved anew for each session.
func (u *Upstream) transport(ctx context.Context, s *session) (mcp.Transport, error) {
	if len(u.cfg.Command) == 0 {
		if u.headerErr != nil {
			return nil, u.headerErr
		}
		if err := u.creds.Set(u.cfg.ResolveHeaders(ctx, u.m.opts.Resolve)); err != nil {
			return nil, err
		}
	}
	sse := func() *http.Client {
		return &http.Client{Transport: &relay.TapTransport{Base: u.limited(), Tap: u.tap(s)}}
	}
	stdio := func(raw []byte) { u.tapMessage(s, raw) }
	return s.tasks.Wrap(dial.Transport(u.cfg, dial.Session{Log: u.log, Stdio: stdio, SSE: sse, HTTP: cmp.Or(s.tappedHC, u.tappedHTTP), Max: u.maxResult(), Life: u.m.ctx})), nil
}

// limited is the upstream's HTTP transport with each message it receives
// bounded by max_result_bytes (maxResult).
func (u *Upstream) limited() http.RoundTripper {
	return msglimit.Transport(u.http.Transport, u.maxResult())
}

// maxResult is the upstream's bound on one message (upconfig.MessageLimit).
func (u *Upstream) maxResult() int64 { return u.cfg.MessageLimit(u.m.opts.MaxResultBytes) }

// connect opens a session, for owner (per_client) or shared (nil owner);
// its HTTP clients, when given, are one principal's (principal.go).
func (u *Upstream) connect(ctx context.Context, owner *mcp.ServerSession, clients ...*http.Client) (*session, error) {
	s := &session{owner: owner, done: make(chan struct{}), ready: make(chan struct{}), tasks: uptasks.NewLink(u.tasks)}
	var hc *http.Client
	if len(clients) == 2 {
		hc, s.tappedHC = clients[0], clients[1]
	}
	defer close(s.ready)
	t, err := u.transport(ctx, s)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "legate", Version: u.m.version}, u.clientOptions(s))
	if u.cfg.Session == SessionPerClient {
		client.AddReceivingMiddleware(rounds.RelayElicitation(func(ctx context.Context) (context.Context, *mcp.ServerSession) { return s.callContext(ctx), s.owner }))
	} else {
		client.AddReceivingMiddleware(s.routeAsk)
	}
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: u.cfg.Protocol()})
	if err != nil {
		return nil, fmt.Errorf("connecting to upstream %s: %w", u.cfg.ID, err)
	}
	s.cs = cs
	if u.streamable() {
		// Every Streamable HTTP session has a relay connection: its
		// task-only tools' task requests go on it (uptasks.Link.Over), and
		// a shared session's calls too; a per-client session's calls go
		// through the SDK client.
		if conn := u.conn(s, hc); u.relayable() {
			s.conn = conn
		}
	}
	go func() {
		cs.Wait()
		close(s.done)
	}()
	return s, nil
}

// clientOptions are the handlers of one upstream session: they relay what
// the upstream sends to the client the session serves.
func (u *Upstream) clientOptions(s *session) *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		Logger: u.log,
		// No roots: a server such as server-filesystem replaces its allowed
		// directories with the client's roots, which would widen its access.
		Capabilities: &mcp.ClientCapabilities{},
		// An upstream's input_required result reaches the call path, which
		// passes it to the client or asks the client itself (rounds.go).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if u.cfg.Session == SessionPerClient {
				u.m.refreshVia(u.cfg.ID, s) // on this client's own process
				return
			}
			u.m.refreshVia(u.cfg.ID, nil)
		},
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			if u.m.opts.OnResourceUpdated != nil {
				u.m.opts.OnResourceUpdated(ctx, r.Params)
			}
		},
	}
	if u.cfg.Session != SessionPerClient {
		// A shared session's requests reach the caller of the one call
		// under way on it, if any (routeAsk). Never roots: see above.
		opts.Capabilities = &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}
	} else {
		opts.CreateMessageHandler = func(ctx context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if s.owner == nil {
				return nil, errors.New("no client to ask")
			}
			return s.owner.CreateMessage(s.callContext(ctx), r.Params)
		}
		opts.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if s.owner == nil {
				return nil, errors.New("no client to ask")
			}
			return rounds.Elicit(s.callContext(ctx), s.owner, r.Params)
		}
	}
	u.cfg.DeclareExtensions(opts.Capabilities)
	return opts
}
