package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestChangesReachARunningServer: a connector or upstream added with the CLI, an edited config
// file and SIGHUP all reach a running "legate serve" without a restart, while a client keeps
// its session (it is told the tools changed, and its next call uses them); an invalid edit is
// refused and the configuration in use goes on serving. Each change's delay, from the command
// (or the write) to the first successful call, is logged: the goal is under 2 s.
func TestChangesReachARunningServer(t *testing.T) {
	need(t)
	t.Parallel()
	var delivered atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { delivered.Add(1) }))
	t.Cleanup(hook.Close)
	up := mcp.NewServer(&mcp.Implementation{Name: "reload-upstream", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "ping", Description: "Answer pong."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)

	state := t.TempDir()
	config := filepath.Join(t.TempDir(), "config.yaml")
	write := func(doc string) {
		t.Helper()
		// Written beside and renamed over, as editors do.
		if err := os.WriteFile(config+".tmp", []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(config+".tmp", config); err != nil {
			t.Fatal(err)
		}
	}
	write(allowAll)
	s := serveState(t, config, state)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var changes atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changes.Add(1) },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1")}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	session := cs.ID()

	// callable waits until name answers a call with a success, and returns how long it took.
	callable := func(what, name string, args map[string]any, since time.Time) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err == nil && !res.IsError {
				t.Logf("%s: %s callable %s after the change", what, name, time.Since(since).Round(time.Millisecond))
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s not callable 30s after the change: %v %v\n%s", what, name, err, res, s.stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	cli := func(args ...string) {
		t.Helper()
		legateRun(t, nil, append(args, "--config", config, "--state-dir", state)...)
	}

	start := time.Now()
	cli("connector", "add", "hook", "--type", "webhook", "--set", "url="+hook.URL, "--set", "allow_private_networks=true")
	callable("connector add", "hook__send", map[string]any{"payload": map[string]any{"n": 1}}, start)
	if delivered.Load() == 0 {
		t.Fatal("the added webhook delivered nothing")
	}

	start = time.Now()
	cli("upstream", "add", "remote", "--url", upSrv.URL)
	callable("upstream add", "mcp__remote__ping", nil, start)

	start = time.Now()
	before := strings.Count(s.stderr.String(), "configuration reloaded")
	write(allowAll + fmt.Sprintf("connectors:\n  - {id: edited, type: webhook, config: {url: %q, allow_private_networks: true}}\n", hook.URL))
	callable("config edit", "edited__send", map[string]any{"payload": "x"}, start)
	// The reload is logged just after its tools are served: counted once logged.
	waitFor(t, 30*time.Second, func() bool { return strings.Count(s.stderr.String(), "configuration reloaded") > before },
		"the config edit's reload was not logged")

	// An invalid edit is refused whole: the tools in use stay.
	reloads := strings.Count(s.stderr.String(), "configuration reloaded")
	write(allowAll + "connectors:\n  - {id: broken, type: no-such-type}\n")
	waitFor(t, 30*time.Second, func() bool { return strings.Contains(s.stderr.String(), "the previous one goes on serving") },
		"no error logged for an invalid config edit")
	callable("after an invalid edit", "edited__send", map[string]any{"payload": "y"}, time.Now())
	if n := strings.Count(s.stderr.String(), "configuration reloaded"); n != reloads {
		t.Fatalf("an invalid edit was applied:\n%s", s.stderr)
	}

	// SIGHUP reloads (and does not end the process); a file fixed in the meantime is taken.
	write(allowAll + fmt.Sprintf("connectors:\n  - {id: hupped, type: webhook, config: {url: %q, allow_private_networks: true}}\n", hook.URL))
	start = time.Now()
	if err := syscall.Kill(s.pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	callable("SIGHUP", "hupped__send", map[string]any{"payload": "z"}, start)
	waitFor(t, 30*time.Second, func() bool { return strings.Contains(s.stderr.String(), "SIGHUP; reloading") }, "SIGHUP not logged")

	if cs.ID() != session {
		t.Fatalf("the session changed: %q, then %q", session, cs.ID())
	}
	if changes.Load() == 0 {
		t.Error("the client was never told the tools changed")
	}
	if res, err := cs.ListTools(ctx, nil); err != nil || !strings.Contains(fmt.Sprint(toolNamesOf(res)), "hupped__send") {
		t.Fatalf("tools/list on the same session: %v %v", toolNamesOf(res), err)
	}
}

func toolNamesOf(res *mcp.ListToolsResult) []string {
	if res == nil {
		return nil
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// waitFor polls cond until it holds or within passes.
func waitFor(t *testing.T, within time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
