package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

func TestMain(m *testing.M) {
	// The stdio fixture is this binary, re-executed.
	upstreamtest.RunStdioChild()
	os.Exit(m.Run())
}

// noLeaks fails the test if, after every cleanup registered later has run
// (closing managers, servers and stores), a goroutine started during the
// test is still running.
func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func memStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func fileStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newManager builds a manager over st for the upstreams; it is closed at
// cleanup. opts.Store (and opts.Pins, unless set) come from st.
func newManager(t *testing.T, st *sqlite.Store, opts upstream.Options, cfgs ...upstream.Config) *upstream.Manager {
	t.Helper()
	var defs []upstream.Def
	for i, c := range cfgs {
		defs = append(defs, upstream.Def{Config: c, Origin: fmt.Sprintf("test upstreams[%d]", i)})
	}
	if opts.Store == nil {
		opts.Store = st.Upstreams()
	}
	if opts.Pins == nil {
		opts.Pins = st.Pins()
	}
	m, err := upstream.NewManager(context.Background(), defs, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// tool finds a cached tool by upstream and name; nil if absent.
func tool(m *upstream.Manager, id, name string) *upstream.Tool {
	for _, t := range m.Tools() {
		if t.Upstream == id && t.Name == name {
			return t
		}
	}
	return nil
}

// names lists the cached tools of one upstream, sorted.
func names(m *upstream.Manager, id string) []string {
	var out []string
	for _, t := range m.Tools() {
		if t.Upstream == id {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return out
}

func waitTool(t *testing.T, m *upstream.Manager, id, name string, within time.Duration) *upstream.Tool {
	t.Helper()
	upstreamtest.Eventually(t, within, func() bool { return tool(m, id, name) != nil }, "tool %s of %s never cached (have %v)", name, id, names(m, id))
	return tool(m, id, name)
}

func status(t *testing.T, m *upstream.Manager, id string) upstream.Status {
	t.Helper()
	all, err := m.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no status for %s", id)
	return upstream.Status{}
}

// call calls a tool with {"text": text} within 10s, with Manager.Call or,
// while relayed is set, Manager.Relay.
func call(m *upstream.Manager, tl *upstream.Tool, text string) (*mcp.CallToolResult, error) {
	return callAs(m, tl, text, upstream.Client{})
}

// callAs is call for client.
func callAs(m *upstream.Manager, tl *upstream.Tool, text string, client upstream.Client) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args, _ := json.Marshal(map[string]string{"text": text})
	if !relayed {
		return m.Call(ctx, tl, args, client)
	}
	rel, res, err := m.Relay(ctx, tl, args, client)
	if rel.JSON != nil {
		res = &mcp.CallToolResult{}
		if err := json.Unmarshal(rel.JSON, res); err != nil {
			return nil, fmt.Errorf("relayed result %s: %w", rel.JSON, err)
		}
	}
	return res, err
}

// relayed makes call use Manager.Relay, as Legate's HTTP fast path does.
var relayed bool

// bothPaths runs test once with calls through Manager.Call, once through
// Manager.Relay.
func bothPaths(t *testing.T, test func(t *testing.T)) {
	for _, relay := range []bool{false, true} {
		t.Run(map[bool]string{false: "sdk", true: "relay"}[relay], func(t *testing.T) {
			relayed = relay
			defer func() { relayed = false }()
			test(t)
		})
	}
}

func upstreamCode(err error) legate.Code {
	if err == nil {
		return ""
	}
	return legate.CodeOf(err)
}

func dur(d time.Duration) legate.Duration { return legate.Duration(d) }

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func debugLogger(b *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
