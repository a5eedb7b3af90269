package harness

// The servers the harness runs in child processes of its own binary (so
// that each one's CPU time and memory can be read from /proc):
//
//	legate-bench upstream -servers N -tools T   go-sdk upstream(s) with an echo tool
//	legate-bench bare                           go-sdk server with the no-op tool (P3, P4, P5 baseline)
//	legate-bench legate -config F -state-dir D  Legate in-process, with the no-op connector type (P3, profiles)
//	legate-bench proxy -target URL              a plain reverse proxy (httputil.ReverseProxy) to URL (P1 reference)
//
// Each listens on -addr (default 127.0.0.1:0) and prints "LISTEN <addr>"
// on stdout once it accepts connections.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/all" // every connector type, as in `legate serve`
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

// ---- the no-op native tool (P3) ----

// noopIn is the no-op tool's input: no arguments.
type noopIn struct{}

// noopTool is the native read tool of the "noop" connector type: it does
// nothing and answers "ok".
var noopTool = connectors.NewTool("nop", "Does nothing and answers ok (legate-bench).", legate.ClassRead,
	func(context.Context, *connectors.Call, *noopIn) (*legate.Result, error) {
		return &legate.Result{Text: "ok"}, nil
	})

type noopConnector struct{}

func (noopConnector) Validate() error                                    { return nil }
func (noopConnector) Test(context.Context, connectors.Credentials) error { return nil }
func (noopConnector) Tools() []connectors.Tool                           { return []connectors.Tool{noopTool} }

func init() {
	connectors.Register(connectors.Type{
		Name:        "noop",
		Description: "legate-bench: one read tool that does nothing",
		New:         func(connectors.Instance) (connectors.Connector, error) { return noopConnector{}, nil },
	})
}

// noopHandler is the same no-op on a bare go-sdk server.
func noopHandler(context.Context, *mcp.CallToolRequest, noopIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
}

// ---- the echo upstream (P1, P2, P4) ----

// EchoIn is the echo tool's input.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func echoHandler(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

// fillerSchema is the input schema of the filler tools (P2).
var fillerSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"text":  {Type: "string", Description: "the text to echo back"},
		"times": {Type: "integer", Description: "how many times (ignored)"},
	},
	Required: []string{"text"},
}

func fillerHandler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

// newUpstreamServer is upstream number i: the echo tool, then tools-1
// filler tools, all read-only.
func newUpstreamServer(i, tools int, pageSize int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("bench-upstream-%d", i), Version: "1"}, &mcp.ServerOptions{PageSize: pageSize})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, echoHandler)
	addFillers(s, "", i, tools-1)
	return s
}

// addFillers adds n filler tools of upstream i, named prefix+"tool_NNN".
func addFillers(s *mcp.Server, prefix string, i, n int) {
	for j := range n {
		s.AddTool(&mcp.Tool{
			Name:        fmt.Sprintf("%stool_%03d", prefix, j+1),
			Description: fmt.Sprintf("Filler tool %d of upstream u%d: returns ok whatever its arguments (legate-bench).", j+1, i),
			InputSchema: fillerSchema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}, fillerHandler)
	}
}

// Stats are the upstream process's counters, served at /_bench/stats.
type Stats struct {
	Requests int64 `json:"requests"` // HTTP requests to the counted MCP paths
	Conns    int64 `json:"conns"`    // TCP connections accepted
}

// UpstreamMain runs `legate-bench upstream`: the echo upstream(s), with
// their request and connection counters at /_bench/stats.
func UpstreamMain(args []string) error {
	fs := flag.NewFlagSet("upstream", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	servers := fs.Int("servers", 1, "upstream servers: /mcp is the first, /u0../u<N-1> all of them")
	tools := fs.Int("tools", 1, "tools per server (echo plus fillers)")
	all := fs.Bool("all", false, "also serve /all: one server with servers×tools tools in one page (uncounted baseline)")
	fs.Parse(args)

	var requests, conns atomic.Int64
	counted := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			h.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	for i := range *servers {
		s := newUpstreamServer(i, *tools, 0)
		h := counted(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		mux.Handle(fmt.Sprintf("/u%d", i), h)
		if i == 0 {
			mux.Handle("/mcp", h)
		}
	}
	if *all {
		total := *servers * *tools
		s := mcp.NewServer(&mcp.Implementation{Name: "bench-all", Version: "1"}, &mcp.ServerOptions{PageSize: total + 1})
		for i := range *servers {
			addFillers(s, fmt.Sprintf("u%d_", i), i, *tools)
		}
		mux.Handle("/all", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	}
	mux.HandleFunc("GET /_bench/ping", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("GET /_bench/stats", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(Stats{Requests: requests.Load(), Conns: conns.Load()})
	})
	mux.HandleFunc("POST /_bench/reset", func(w http.ResponseWriter, r *http.Request) {
		requests.Store(0)
		conns.Store(0)
	})
	srv := &http.Server{Handler: mux, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}}
	return ServeUntilSignal(srv, *addr)
}

// BareMain runs `legate-bench bare`: the no-op tool on a bare go-sdk server.
func BareMain(args []string) error {
	fs := flag.NewFlagSet("bare", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	fs.Parse(args)
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-bare", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "nop", Description: noopTool.Description,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, noopHandler)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	return ServeUntilSignal(&http.Server{Handler: mux}, *addr)
}

// ProxyMain runs the reference for P1: a plain forwarding proxy, no policy,
// no audit, nothing decoded, with a connection pool as large as Legate's.
func ProxyMain(args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	target := fs.String("target", "", "the upstream's base URL, http://host:port")
	fs.Parse(args)
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-target %q: not a base URL", *target)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{Proxy: nil, MaxIdleConns: 64, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
	return ServeUntilSignal(&http.Server{Handler: rp}, *addr)
}

// ServeUntilSignal serves srv on addr, prints "LISTEN <addr>" once it
// accepts connections, and closes it on SIGTERM or an interrupt.
func ServeUntilSignal(srv *http.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("LISTEN %s\n", ln.Addr())
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, os.Interrupt)
		<-c
		srv.Close()
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// LegateMain runs Legate in this process as `legate serve` does
// (config, SQLite store in the state directory, server.New, Start,
// ServeHTTP), with the no-op connector type registered besides every
// built-in type, optionally under a CPU profile.
func LegateMain(args []string) error {
	fs := flag.NewFlagSet("legate", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	cfgPath := fs.String("config", "", "config file")
	stateDir := fs.String("state-dir", "", "state directory")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile here")
	memProfile := fs.String("memprofile", "", "write an allocation profile here on exit")
	fromListen := fs.Bool("profile-serving", false, "start the CPU profile once listening (not at process start)")
	fs.Parse(args)

	startProfile := func() error {
		if *cpuProfile == "" {
			return nil
		}
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		return pprof.StartCPUProfile(f) // stopped (and f flushed) on exit
	}
	defer pprof.StopCPUProfile()
	if !*fromListen {
		if err := startProfile(); err != nil {
			return err
		}
	}
	if *memProfile != "" {
		defer func() {
			f, err := os.Create(*memProfile)
			if err == nil {
				runtime.GC()
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	st, err := sqlite.Open(ctx, *stateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st, Logger: log, Version: "bench"})
	if err != nil {
		return err
	}
	defer gw.Close()
	gw.Start(ctx)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *fromListen {
		if err := startProfile(); err != nil {
			return err
		}
	}
	fmt.Printf("LISTEN %s\n", ln.Addr())
	return gw.ServeHTTP(ctx, ln)
}
