package upstream_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// clientSession is a client's session with Legate, as a per_client
// upstream sees it: a server session, here over an in-memory pair.
func clientSession(t *testing.T) *mcp.ServerSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "legate-stand-in", Version: "1"}, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	return ss
}

// A per_client stdio upstream whose processes send tools/list_changed at
// start runs exactly one process per client session: the re-list the
// notification asks for goes to the session (and process) that sent it,
// not to one more process.
func TestPerClientListChangedStartsNoOtherProcess(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	fx.SetNotify(true)
	cfg := stdioConfig("pc", fx)
	cfg.Session = upstream.SessionPerClient
	m := newManager(t, memStore(t), upstream.Options{}, cfg)
	m.Start(upstreamtest.Context(t))
	pidTool := waitTool(t, m, "pc", "pid", 10*time.Second)
	// The first listing runs on a short session: one process, which ends
	// (its own list_changed is answered on it, or dropped once it ended).
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return len(fx.Alive()) == 0 }, "the listing process %v never ended", fx.Alive())
	listers := len(fx.PIDs())
	if listers != 1 {
		t.Errorf("%d processes for the first listing, want 1: %v", listers, fx.PIDs())
	}

	const clients = 3
	for i := range clients {
		res, err := callAs(m, pidTool, "", upstream.Client{Session: clientSession(t)})
		if err != nil || res.IsError {
			t.Fatalf("client %d: %v %v", i, res, err)
		}
		pid, err := strconv.Atoi(upstreamtest.Text(res))
		if err != nil {
			t.Fatalf("client %d: pid %q", i, upstreamtest.Text(res))
		}
		// The process said its tools changed: they are listed again on it.
		upstreamtest.Eventually(t, 10*time.Second, func() bool { return fx.Lists(pid) >= 1 },
			"client %d's process %d was never asked for its tools again (processes %v)", i, pid, fx.PIDs())
		upstreamtest.Eventually(t, 10*time.Second, func() bool { return tool(m, "pc", "late") != nil },
			"the tool added after the handshake was never listed")
	}
	if got := len(fx.PIDs()); got != listers+clients {
		t.Fatalf("%d processes started for %d client sessions (and %d listing): %v", got, clients, listers, fx.PIDs())
	}
	if st := status(t, m, "pc"); st.Sessions != clients {
		t.Errorf("%d sessions, want %d", st.Sessions, clients)
	}
}

// A per_client upstream back after a failure lists its tools again on the
// first client session that reaches it, not on one more process.
func TestPerClientBackAfterFailureStartsNoOtherProcess(t *testing.T) {
	noLeaks(t)
	fx := upstreamtest.NewStdio(t)
	cfg := stdioConfig("pc", fx)
	cfg.Session = upstream.SessionPerClient
	// The circuit stays closed: the calls while backing off fail at once.
	m := newManager(t, memStore(t), upstream.Options{BreakerFailures: 1 << 20}, cfg)
	if _, err := m.Refresh(context.Background(), "pc"); err != nil {
		t.Fatal(err)
	}
	pidTool := tool(m, "pc", "pid")
	fx.SetDown(true)
	owner := clientSession(t)
	if _, err := callAs(m, pidTool, "", upstream.Client{Session: owner}); err == nil {
		t.Fatal("a call succeeded while the server does not start")
	}
	fx.SetDown(false)
	before := len(fx.PIDs())
	var pid int
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		res, err := callAs(m, pidTool, "", upstream.Client{Session: owner})
		if err != nil || res.IsError {
			return false // backing off
		}
		pid, _ = strconv.Atoi(upstreamtest.Text(res))
		return true
	}, "the client never reached the server again")
	upstreamtest.Eventually(t, 10*time.Second, func() bool { return fx.Lists(pid) >= 1 },
		"the tools were not listed again on the client's process %d (processes %v)", pid, fx.PIDs())
	if got := len(fx.PIDs()); got != before+1 {
		t.Fatalf("%d processes started once the server was back, want 1 (the client's): %v", got-before, fx.PIDs())
	}
}
