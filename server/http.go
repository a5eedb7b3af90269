package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// Handler returns the HTTP handler: MCP at /mcp, /healthz and /readyz.
// listen is the address served, used to decide which Host and Origin
// headers are local.
func (g *Gateway) Handler(listen string) http.Handler {
	getServer := func(*http.Request) *mcp.Server { return g.mcp }
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout: g.sessionIdle(),
		Logger:         g.log,
	})
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       g.log,
		PropagateRequestCancellation: true,
	})
	// 2025-11-25 and earlier clients get a stateful session; a 2026-07-28
	// request carries its version header and no session id.
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.serveFast(w, r) {
			return
		}
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" && r.Header.Get("Mcp-Protocol-Version") >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		if ls := g.liveSession(sid); ls != nil {
			g.serveSDK(stateful, w, r, sid, ls)
			return
		}
		stateful.ServeHTTP(w, r)
	})

	// With authentication on, every /mcp request needs a valid bearer token
	// (its principal is the caller, and a session answers only the
	// principal that opened it), and the admin API the approver role.
	var mcpH, adminH http.Handler = mcpHandler, g.adminHandler()
	if g.auth.Enabled() {
		mcpH = g.auth.Middleware()(mcpH)
		adminH = g.auth.Middleware()(g.auth.RequireRole(RoleApprover, adminH))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.guard(listen, mcpH))
	mux.Handle("/admin/", g.guard(listen, adminH))
	// RFC 9728 metadata is public: outside the Origin check.
	mux.Handle("GET "+MetadataPath, g.auth.MetadataHandler())
	mux.Handle("GET "+MetadataPath+"/mcp", g.auth.MetadataHandler())
	mux.Handle("GET /metrics", promhttp.HandlerFor(g.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if !g.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, `{"status":"starting"}`)
			return
		}
		fmt.Fprintf(w, `{"status":"ready","tools":%d}`+"\n", g.Catalog().Len())
	})
	return mux
}

// guard refuses requests whose Host or Origin are not this server's,
// against DNS rebinding and cross-site requests from browsers: on a
// loopback listener only loopback host names are accepted as Host; an
// Origin, when present, must be a loopback origin (on loopback) or one of
// allowed_origins.
func (g *Gateway) guard(listen string, next http.Handler) http.Handler {
	cfg := g.opts.Config
	loopback := isLoopbackListen(listen)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		hostOK := slices.Contains(cfg.AllowedHosts, r.Host) || slices.Contains(cfg.AllowedHosts, host) ||
			(loopback && isLoopbackName(host)) || (!loopback && len(cfg.AllowedHosts) == 0)
		if !hostOK {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not accepted here (add it to allowed_hosts)", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(cfg.AllowedOrigins, origin) {
			u, err := url.Parse(origin)
			if err != nil || !(loopback && isLoopbackName(u.Hostname())) {
				http.Error(w, fmt.Sprintf("forbidden: Origin %q is not allowed (add it to allowed_origins)", origin), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isLoopbackListen(listen string) bool {
	host := hostOnly(listen)
	return host != "" && isLoopbackName(host)
}

// ServeHTTP serves on ln until ctx ends, then shuts down gracefully:
// sessions are closed and in-flight requests get up to 10 seconds.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           g.Handler(ln.Addr().String()),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          nil,
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
// session goes on (stdio.go).
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return g.mcp.Run(ctx, &lineTransport{r: os.Stdin, w: os.Stdout, log: g.log, max: maxStdioLine})
}
