package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server/jsonlines"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultSessionIdleTimeout closes HTTP client sessions idle this long.
const DefaultSessionIdleTimeout = 30 * time.Minute

// statelessVersion is the first protocol version without sessions.
const statelessVersion = "2026-07-28"

// sessionIdle is how long an HTTP session may go without a request before
// it is closed.
func (g *Gateway) sessionIdle() time.Duration {
	if d := time.Duration(g.opts.Config.SessionIdleTimeout); d > 0 {
		return d
	}
	return DefaultSessionIdleTimeout
}

// Handler returns the HTTP handler: MCP at /mcp and /mcp/{profile}, the admin API under
// /admin/, per-user connections under /connect/, /metrics, /healthz and /readyz, all behind the Host and Origin
// guard, and the public RFC 9728 metadata. listen is the address served,
// used to decide which Host and Origin headers are local.
func (g *Gateway) Handler(listen string) http.Handler {
	// With authentication on, every /mcp request needs a valid bearer token
	// (its principal is the caller, and a session answers only the
	// identity that opened it), the admin API the approver role, and
	// /metrics the admin role: its series name every tenant's tools.
	// The probes stay open to load balancers, behind the guard.
	adminH := AdminHandler(g, listen)
	var mcpH, metricsH http.Handler = g.discovery.Narrow(g.mcpHandler()), g.metrics.Handler()
	if g.auth.Enabled() {
		mcpH = g.auth.Middleware()(mcpH)
		metricsH = g.auth.Middleware()(g.auth.RequireRole(auth.RoleAdmin, metricsH))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpH)
	mux.Handle("/mcp/{profile}", mcpH) // one URL per toolset (profiles.Discovery.Narrow)
	mux.Handle("/admin/", adminH)
	mux.Handle("GET /metrics", metricsH)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", g.readyz)
	var authn func(http.Handler) http.Handler // none: the caller is Options.Principal
	if g.auth.Enabled() {
		authn = g.auth.Middleware()
	}
	mux.Handle("/connect/", g.connections.Handler(authn)) // per-user connections' consent flow
	root := http.NewServeMux()
	// Host and Origin checked, the connect page's own form let through
	// (it refuses Origin: null itself).
	root.Handle("/", auth.Guard(listen, g.opts.Config.AllowedHosts, g.opts.Config.AllowedOrigins, g.connections.OwnForm, mux))
	root.Handle("POST /hooks/{instance}", g.hooks) // providers' webhooks: signed, not browsers', outside the guard
	// RFC 9728 metadata is public: outside the Host and Origin check.
	root.Handle("GET "+auth.MetadataPath, g.auth.MetadataHandler())
	root.Handle("GET "+auth.MetadataPath+"/mcp", g.auth.MetadataHandler())
	root.Handle("GET "+auth.MetadataPath+"/mcp/{profile}", g.auth.ProfileMetadataHandler())
	g.auth.MountLocalIssuer(root) // Legate's own authorization server, if configured
	return root
}

// mcpHandler serves /mcp: 2025-11-25 and earlier clients get a stateful
// session; a 2026-07-28 request carries its version header and no session
// id. The fast paths answer what they can first.
func (g *Gateway) mcpHandler() http.Handler {
	getServer := func(*http.Request) *mcp.Server { return g.mcp }
	maxBody := g.opts.Config.HTTP.WithDefaults().MaxBodyBytes
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout:      g.sessionIdle(),
		Logger:              g.log,
		MaxRequestBodyBytes: maxBody,
	})
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       g.log,
		PropagateRequestCancellation: true,
		MaxRequestBodyBytes:          maxBody,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Bounded before the fast paths read it too: an oversized body ends
		// at the SDK, which answers 413.
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		r = g.tracer.Request(r)                              // a caller's traceparent, when tracing
		if g.tasks.Serve(w, r) || g.fast.paths.Serve(w, r) { // tasks/*, which the SDK lacks, first
			return
		}
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" && r.Header.Get("Mcp-Protocol-Version") >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		g.fast.sessions.ServeSDK(stateful, w, r)
	})
}

func (g *Gateway) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if !g.ready.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, `{"status":"starting"}`)
		return
	}
	fmt.Fprintf(w, `{"status":"ready","tools":%d}`+"\n", g.Catalog().Len())
}

// ServeHTTP serves on ln, and on the panel's and metrics.listen's
// addresses when set, until ctx ends, then shuts down gracefully:
// sessions are closed and in-flight requests get up to 10 seconds.
//
// The `http:` limits bound slow and idle clients: read_header_timeout the
// headers, read_timeout the whole request with its body, idle_timeout a
// keep-alive connection between requests. Neither cuts an event stream or
// a long tool call: net/http lifts the read deadline once a request's body
// is read (to watch for the client going away), and there is no write
// timeout, which would end every stream.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener) error {
	stopPanel, err := startPanel(ctx, g)
	if err != nil {
		return err
	}
	defer stopPanel()
	limits := g.opts.Config.HTTP.WithDefaults()
	// metrics.listen: the series alone, for a scraper without a token.
	_, stopMetrics, err := g.metrics.Serve(ctx, g.opts.Config.Metrics.Listen, &audit.ServeOptions{Logger: g.log,
		Guard:             func(l string, h http.Handler) http.Handler { return auth.Guard(l, nil, nil, nil, h) },
		ReadHeaderTimeout: time.Duration(limits.ReadHeaderTimeout), ReadTimeout: time.Duration(limits.ReadTimeout), IdleTimeout: time.Duration(limits.IdleTimeout)})
	if err != nil {
		return err
	}
	defer stopMetrics()
	srv := &http.Server{
		Handler:           g.Handler(ln.Addr().String()),
		ReadHeaderTimeout: time.Duration(limits.ReadHeaderTimeout),
		ReadTimeout:       time.Duration(limits.ReadTimeout),
		IdleTimeout:       time.Duration(limits.IdleTimeout),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	g.ready.Store(false)
	for s := range g.mcp.Sessions() {
		s.Close()
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ServeStdio serves one client over stdin and stdout until it disconnects
// or ctx ends. A malformed line is answered with a JSON-RPC error and the
// session goes on (package jsonlines); the fast paths take the lines they
// answer (fastpath.Line).
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return jsonlines.Run(ctx, g.mcp, &jsonlines.Transport{R: os.Stdin, W: os.Stdout, Log: g.log, Max: jsonlines.MaxLine}, g.fast.paths.Line)
}
