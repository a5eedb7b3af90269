// Package upstreamtest holds fixtures for tests of Legate's upstream MCP
// servers: go-sdk servers served over Streamable HTTP on 127.0.0.1, HTTP
// servers that stop and come back on the same port, handlers that
// misbehave on demand (hang, crash, HTTP 500, malformed JSON, slowness), a
// hand-written JSON-RPC server that lists any tool definition as given
// (schemas the go-sdk refuses to register included), and a real stdio MCP
// server process (the test binary itself, re-executed).
//
// Everything listens on 127.0.0.1 only and is torn down by t.Cleanup.
package upstreamtest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an HTTP server on 127.0.0.1 that can be stopped and started
// again on the same port, as an upstream that goes away and comes back.
type Server struct {
	t    testing.TB
	addr string

	mu       sync.Mutex
	h        http.Handler
	srv      *http.Server
	served   chan struct{} // closed when srv's Serve has returned
	inflight atomic.Int64  // handlers running
}

// NewServer serves h on a fresh 127.0.0.1 port until the test ends.
func NewServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, addr: ln.Addr().String(), h: h}
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp.
func (s *Server) URL() string { return "http://" + s.addr + "/mcp" }

// Addr is the host:port served.
func (s *Server) Addr() string { return s.addr }

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		s.mu.Lock()
		h := s.h
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})}
	served := make(chan struct{})
	s.mu.Lock()
	s.srv, s.served = srv, served
	s.mu.Unlock()
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
}

// Stop closes the listener and every connection (the upstream is gone:
// new connections are refused) and waits for the handlers to return.
func (s *Server) Stop() {
	s.mu.Lock()
	srv, served := s.srv, s.served
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	srv.Close()
	<-served // Serve returns at once when the server is closed
	deadline := time.Now().Add(10 * time.Second)
	for s.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			s.t.Errorf("upstreamtest: %d handlers of %s still running 10s after Stop", s.inflight.Load(), s.addr)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Start serves again on the same port, with h if it is not nil.
func (s *Server) Start(h http.Handler) {
	s.t.Helper()
	s.mu.Lock()
	if s.srv != nil {
		s.mu.Unlock()
		s.t.Fatalf("upstreamtest: %s is already serving", s.addr)
	}
	if h != nil {
		s.h = h
	}
	s.mu.Unlock()
	var ln net.Listener
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err = net.Listen("tcp", s.addr)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("upstreamtest: listening again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

// Handler serves srv over Streamable HTTP (stateful, as a typical remote
// MCP server).
func Handler(srv *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
}

// NewHTTP serves a go-sdk server over Streamable HTTP on 127.0.0.1 and
// returns its URL. At cleanup the listener is closed and every session of
// srv still open is closed, so no goroutine outlives the test.
func NewHTTP(t testing.TB, srv *mcp.Server) string {
	t.Helper()
	return NewHTTPServer(t, srv).URL()
}

// NewHTTPServer is NewHTTP returning the Server, to stop and start it.
func NewHTTPServer(t testing.TB, srv *mcp.Server) *Server {
	t.Helper()
	CloseSessionsAtCleanup(t, srv)
	return NewServer(t, Handler(srv))
}

// CloseSessionsAtCleanup closes every session of srv when the test ends.
func CloseSessionsAtCleanup(t testing.TB, srv *mcp.Server) {
	t.Cleanup(func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	})
}

// Eventually polls cond every 10ms until it holds or the deadline passes,
// then fails the test with the message.
func Eventually(t testing.TB, within time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: "+format, append([]any{within}, args...)...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Lazy is a value computed when printed, for Eventually's message.
type Lazy func() any

func (l Lazy) String() string { return fmt.Sprint(l()) }

// Context is a context ended at cleanup.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
