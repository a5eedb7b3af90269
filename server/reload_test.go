package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// closerConn is echoConn that counts how often an instance is closed;
// each instance is its own value.
type closerConn struct {
	echoConn
	_ byte
}

var closed atomic.Int32

func (*closerConn) Close() error { closed.Add(1); return nil }

func init() {
	connectors.Register(connectors.Type{
		Name: "closer-test", Description: "test connector with resources",
		New: func(connectors.Instance) (connectors.Connector, error) { return &closerConn{}, nil },
	})
}

func parse(t *testing.T, doc string) *config.File {
	t.Helper()
	cfg, err := config.Parse([]byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// listChanges connects a client that counts notifications/tools/list_changed.
func listChanges(t *testing.T, url string) (*mcp.ClientSession, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	c := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.Add(1) },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &n
}

// toolList is the tools cs lists, joined by spaces.
func toolList(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	return strings.Join(toolNames(t, cs), " ")
}

// hi calls name with text "hi".
func hi(t *testing.T, cs *mcp.ClientSession, name string) *mcp.CallToolResult {
	t.Helper()
	res, _ := callText(t, cs, name, "hi")
	return res
}

// A reload applies a new configuration to a running gateway: the client's
// session goes on, it is told the tools changed, and the new connector,
// policy and profile apply to its next calls; an instance whose definition
// did not change is kept, a removed one closed.
func TestReloadAppliesANewConfiguration(t *testing.T) {
	st := memStore(t)
	var logs syncbuf.Buffer
	first := parse(t, "call_timeout: 100ms\n"+testConfig+"  - {id: keep, type: closer-test}\n  - {id: drop, type: closer-test}\n")
	gw, err := server.New(context.Background(), server.Options{Config: first, Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	cs, changes := listChanges(t, serve(t, gw))
	if got := toolList(t, cs); !strings.Contains(got, "drop__echo") || strings.Contains(got, "added__echo") {
		t.Fatalf("before: %s", got)
	}
	closedBefore := closed.Load()

	next := parse(t, `listen: 127.0.0.1:9999
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
  rules:
    - {tool: keep.echo, action: deny}
connectors:
  - id: e
    type: echo-test
    credentials:
      key: {env: LEGATE_TEST_KEY}
  - {id: keep, type: closer-test}
  - {id: added, type: echo-test}
`)
	if err := gw.Reload(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return changes.Load() > 0 }, "no notifications/tools/list_changed after the reload")
	got := toolList(t, cs)
	if !strings.Contains(got, "added__echo") || strings.Contains(got, "drop__") {
		t.Fatalf("after: %s", got)
	}
	if res := hi(t, cs, "added__echo"); res.IsError {
		t.Fatalf("the added instance: %v", res.Content[0])
	}
	if code, _ := errorCode(t, hi(t, cs, "keep__echo")); code != string(legate.CodePolicyDenied) {
		t.Fatalf("the new policy: %q, want POLICY_DENIED", code)
	}
	// The dropped instance is closed once the calls that may run on it
	// have had their time (call_timeout); the kept one is not rebuilt.
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return closed.Load()-closedBefore == 1 }, "the dropped instance was never closed")
	gw.Close()
	if n := closed.Load() - closedBefore; n != 2 {
		t.Fatalf("closing the gateway closed %d instances in all, want 2 (dropped, then kept)", n-1)
	}
	if !strings.Contains(logs.String(), "keys=listen") {
		t.Errorf("no warning that listen waits for a restart:\n%s", logs.String())
	}
}

// A configuration that does not build is refused whole: the one in use
// goes on serving, unchanged.
func TestReloadRefusesAnInvalidConfiguration(t *testing.T) {
	gw := newGateway(t, testConfig)
	cs := connect(t, serve(t, gw), "2025-11-25")
	before := toolList(t, cs)
	for name, doc := range map[string]string{
		"unknown type":        testConfig + "  - {id: x, type: no-such-type}\n",
		"duplicate instance":  testConfig + "  - {id: e, type: echo-test}\n",
		"instance credential": testConfig + "  - id: y\n    type: echo-test\n    credentials: {nope: {env: X}}\n",
	} {
		cfg, err := config.Parse([]byte(doc), func(string) (string, bool) { return "", false })
		if err != nil {
			continue // refused at parsing already, as the file watcher refuses it
		}
		if err := gw.Reload(context.Background(), cfg); err == nil {
			t.Errorf("%s: reloaded", name)
		}
	}
	if got := toolList(t, cs); got != before {
		t.Fatalf("tools changed by refused reloads: %s, want %s", got, before)
	}
	if res := hi(t, cs, "e__echo"); res.IsError {
		t.Fatalf("after refused reloads: %v", res.Content[0])
	}
}

// A started gateway picks up connectors and upstreams added to or removed
// from the store by another process (the CLI) without being told.
func TestStoreChangesReachARunningGateway(t *testing.T) {
	st := memStore(t)
	gw, err := server.New(context.Background(), server.Options{Config: parse(t, testConfig), Store: st, StoreWatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	cs, changes := listChanges(t, serve(t, gw))
	ctx := context.Background()

	if err := st.Connectors().Create(ctx, store.Connector{ID: "later", Type: "echo-test", Config: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	_, up := upstreamtest.NewRaw(t, `{"name":"lookup","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	def, _ := json.Marshal(map[string]string{"id": "remote", "url": up.URL()})
	if err := st.Upstreams().Create(ctx, store.Upstream{ID: "remote", Definition: def}); err != nil {
		t.Fatal(err)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		got := toolList(t, cs)
		return strings.Contains(got, "later__echo") && strings.Contains(got, "mcp__remote__lookup")
	}, "stored connector and upstream never listed: %s", toolList(t, cs))
	if res := hi(t, cs, "later__echo"); res.IsError {
		t.Fatalf("the stored instance: %v", res.Content[0])
	}
	if res := hi(t, cs, "mcp__remote__lookup"); res.IsError {
		t.Fatalf("the stored upstream: %v", res.Content[0])
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return changes.Load() > 0 }, "no notifications/tools/list_changed")

	if err := st.Connectors().Delete(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return !strings.Contains(toolList(t, cs), "later__echo") },
		"a removed connector is still listed")
}

// A connector stored after the gateway read the store but before its
// watcher first looks (a CLI command at start-up) is picked up too.
func TestStoreChangeBeforeTheWatcherIsSeen(t *testing.T) {
	st := memStore(t)
	gw, err := server.New(context.Background(), server.Options{Config: parse(t, testConfig), Store: st, StoreWatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	if err := st.Connectors().Create(context.Background(), store.Connector{ID: "early", Type: "echo-test", Config: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	gw.Start(context.Background())
	cs, _ := listChanges(t, serve(t, gw))
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(toolList(t, cs), "early__echo") },
		"a connector stored before the watcher started is never listed: %s", toolList(t, cs))
}
