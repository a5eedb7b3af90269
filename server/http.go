package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultSessionIdleTimeout closes HTTP client sessions idle this long.
const DefaultSessionIdleTimeout = 30 * time.Minute

// statelessVersion is the first protocol version without sessions.
const statelessVersion = "2026-07-28"

// Handler returns the HTTP handler: MCP at /mcp, /healthz and /readyz.
// listen is the address served, used to decide which Host and Origin
// headers are local.
func (g *Gateway) Handler(listen string) http.Handler {
	idle := time.Duration(g.opts.Config.SessionIdleTimeout)
	if idle == 0 {
		idle = DefaultSessionIdleTimeout
	}
	getServer := func(*http.Request) *mcp.Server { return g.mcp }
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout: idle,
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
		if g.fastList(w, r) {
			return
		}
		if r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Protocol-Version") >= statelessVersion {
			stateless.ServeHTTP(w, r)
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

// fastList answers a plain tools/list of a live session straight from the
// catalog's encoded list. The SDK would encode thousands of tool
// definitions twice per request (see docs/BENCHMARKS.md, P2); the answer is
// the same. Anything else — another method, a cursor, a batch, a session
// this process does not know or that another principal opened — goes to
// the SDK as usual.
func (g *Gateway) fastList(w http.ResponseWriter, r *http.Request) bool {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost || sid == "" {
		return false
	}
	owner, ok := g.live.Load(sid)
	if !ok || owner.(string) != userOf(r.Context()) || !g.sessionAlive(sid) {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<10+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > 4<<10 || !bytes.Contains(body, []byte(`"tools/list"`)) {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/list" || len(msg.ID) == 0 || msg.Params.Cursor != "" {
		return false
	}
	// Framed as the SDK frames it: an event stream when the client takes one.
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	list := g.viewFor(PrincipalFromContext(r.Context())).ListJSON()
	out := make([]byte, 0, len(list)+len(msg.ID)+64)
	if sse {
		out = append(out, "event: message\ndata: "...)
	}
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, msg.ID...)
	out = append(out, `,"result":`...)
	out = append(out, list...)
	out = append(out, '}')
	if sse {
		out = append(out, "\n\n"...)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Mcp-Session-Id", sid)
	w.Write(out)
	return true
}

// userOf is the authenticated user of a request, "" without auth: a
// session answers only the user who opened it.
func userOf(ctx context.Context) string {
	if ti := auth.TokenInfoFromContext(ctx); ti != nil {
		return ti.UserID
	}
	return ""
}

// trackSession records an initialized session, and who opened it, for
// fastList. Entries of ended sessions are pruned as new ones come, without
// a goroutine per session.
func (g *Gateway) trackSession(ctx context.Context, req *mcp.InitializedRequest) {
	id := req.Session.ID()
	if id == "" {
		return // stateless: no session to answer for
	}
	user := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		user = req.Extra.TokenInfo.UserID
	}
	g.live.Store(id, user)
	if g.tracked.Add(1)%256 == 0 {
		alive := map[string]bool{}
		for ss := range g.mcp.Sessions() {
			alive[ss.ID()] = true
		}
		g.live.Range(func(k, _ any) bool {
			if !alive[k.(string)] {
				g.live.Delete(k)
			}
			return true
		})
	}
}

// sessionAlive reports whether the SDK still holds the session.
func (g *Gateway) sessionAlive(id string) bool {
	for ss := range g.mcp.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	g.live.Delete(id)
	return false
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
// or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return g.mcp.Run(ctx, &mcp.StdioTransport{})
}
