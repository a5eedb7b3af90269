package upstreamtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Fault is how a Faulty handler answers tools/call.
type Fault int32

// The faults. Except with Unresponsive, every other request (initialize,
// tools/list, notifications, the SSE stream) is served normally, so that
// Legate connects and caches tools, then sees only its calls fail.
const (
	// Healthy passes calls through.
	Healthy Fault = iota
	// Hang never answers: the request stays open until the client gives up
	// (or the test ends).
	Hang
	// Crash drops the TCP connection in the middle of the call, without an
	// HTTP response.
	Crash
	// Status500 answers HTTP 500 Internal Server Error.
	Status500
	// Malformed answers HTTP 200, Content-Type application/json, with a body
	// that is not JSON.
	Malformed
	// Slow waits SlowBy, then passes the call through.
	Slow
	// Unresponsive hangs every POST, initialize included: a server that
	// accepts connections but never answers.
	Unresponsive
	// CrashOnce drops the connection of the next call, as Crash does, and
	// turns Healthy: a server that closed a kept-alive connection as a
	// request arrived on it.
	CrashOnce
)

func (f Fault) String() string {
	return [...]string{"healthy", "hang", "crash", "status500", "malformed", "slow", "unresponsive", "crash once"}[f]
}

// Faulty wraps an MCP HTTP handler and breaks its tools/call requests on demand.
type Faulty struct {
	inner  http.Handler
	mode   atomic.Int32
	slowBy atomic.Int64

	// Calls counts the tools/call requests that reached the handler.
	Calls atomic.Int64

	stopOnce sync.Once
	stop     chan struct{}

	mu      sync.Mutex
	held    int           // requests held so far by Hang, Slow or Unresponsive
	changed chan struct{} // closed and replaced when held grows
}

// NewFaulty wraps inner. Hanging and slow requests are released when the
// test ends, before the servers close.
func NewFaulty(t testing.TB, inner http.Handler) *Faulty {
	f := &Faulty{inner: inner, stop: make(chan struct{}), changed: make(chan struct{})}
	f.slowBy.Store(int64(time.Second))
	t.Cleanup(f.Release)
	return f
}

// NewFaultyHTTP serves srv behind a Faulty handler on 127.0.0.1.
func NewFaultyHTTP(t testing.TB, srv *mcp.Server) (*Faulty, *Server) {
	t.Helper()
	CloseSessionsAtCleanup(t, srv)
	f := NewFaulty(t, Handler(srv))
	s := NewServer(t, f)
	// Registered after the server's cleanup, so it runs before it.
	t.Cleanup(f.Release)
	return f, s
}

// Set changes how calls are answered from now on.
func (f *Faulty) Set(mode Fault) { f.mode.Store(int32(mode)) }

// Mode is the current fault.
func (f *Faulty) Mode() Fault { return Fault(f.mode.Load()) }

// SetSlowBy sets the delay of Slow (default 1s).
func (f *Faulty) SetSlowBy(d time.Duration) { f.slowBy.Store(int64(d)) }

// WaitHeld waits until n requests in all have been held by Hang, Slow or
// Unresponsive since f was made: the sync point of a test that acts while
// a client is connecting or calling, instead of a sleep. It fails the test
// after 10s.
func (f *Faulty) WaitHeld(t testing.TB, n int) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		held, changed := f.held, f.changed
		f.mu.Unlock()
		if held >= n {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("upstreamtest: %d requests held after 10s, want %d", held, n)
		}
	}
}

// Held is how many requests Hang, Slow or Unresponsive have held so far.
func (f *Faulty) Held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

// holding records that a request is being held and wakes WaitHeld.
func (f *Faulty) holding() {
	f.mu.Lock()
	f.held++
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// Release ends every hanging or slow request.
func (f *Faulty) Release() { f.stopOnce.Do(func() { close(f.stop) }) }

func (f *Faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		f.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &msg)
	if f.Mode() == Unresponsive {
		f.holding()
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	}
	if msg.Method != "tools/call" {
		f.inner.ServeHTTP(w, r)
		return
	}
	f.Calls.Add(1)
	mode := f.Mode()
	if mode == CrashOnce && f.mode.CompareAndSwap(int32(CrashOnce), int32(Healthy)) {
		mode = Crash
	}
	switch mode {
	case Hang:
		f.holding()
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	case Crash:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("upstreamtest: connection cannot be hijacked")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
		return
	case Status500:
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	case Malformed:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+"\x00garbage{{{")
		return
	case Slow:
		f.holding()
		select {
		case <-time.After(time.Duration(f.slowBy.Load())):
		case <-r.Context().Done():
			return
		case <-f.stop:
			return
		}
	}
	f.inner.ServeHTTP(w, r)
}
