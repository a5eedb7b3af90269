package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
	"github.com/legate-mcp/legate/vault"
)

// replicaStores opens n stores on one PostgreSQL schema, as n replicas'
// processes would: each its own pool.
func replicaStores(t *testing.T, n int) []store.Store {
	t.Helper()
	url := pgtest.URL(t)
	var out []store.Store
	for range n {
		st, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		out = append(out, st)
	}
	return out
}

// A refresh made on one replica reaches the catalog of another and its
// clients' tools/list_changed, through the store's cache version, which
// each replica polls every 500ms.
func TestRefreshOnOneReplicaReachesAnother(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, roTool("a"))
	doc := fmt.Sprintf("upstreams:\n  - {id: raw, url: %q}\n", srv.URL())
	sts := replicaStores(t, 2)
	a, b := upGateway(t, doc, sts[0], nil), upGateway(t, doc, sts[1], nil)
	waitCatalog(t, a, "mcp.raw.a")
	waitCatalog(t, b, "mcp.raw.a")
	// B's catalog may come from A's listing, through the store, before B
	// lists the upstream itself: wait for both, or B's own first listing
	// could see the change first, leaving A's refresh nothing to find.
	waitFor(t, "each replica's first listing", func() bool { return raw.Lists.Load() >= 2 })
	cs, changed := upClient(t, serve(t, b))
	drain(changed)

	raw.SetTools(roTool("a"), roTool("fresh"))
	start := time.Now()
	d, err := a.Upstreams().Refresh(context.Background(), "raw")
	if err != nil || !slices.Equal(d.Added, []string{"fresh"}) {
		t.Fatalf("refresh on replica A: %s %v", d, err)
	}
	waitNotified(t, changed, 10*time.Second, "a refresh on another replica")
	t.Logf("replica B's client was told %s after replica A's refresh returned", time.Since(start).Round(time.Millisecond))
	if _, ok := b.Catalog().Lookup("mcp.raw.fresh"); !ok {
		t.Fatal("replica B's catalog lacks the tool its client was told of")
	}
	if !slices.Contains(toolNames(t, cs), wire("mcp.raw.fresh")) {
		t.Fatal("replica B does not list the refreshed tool")
	}
}

// A call waiting for approval on one replica is decided through another:
// it runs once, on one replica, and returns its result to its client.
func TestApprovalDecidedOnAnotherReplica(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`)
	doc := fmt.Sprintf("upstreams:\n  - {id: raw, url: %q}\npolicy:\n  rules:\n    - {upstream: raw, action: approve}\n", srv.URL())
	sts := replicaStores(t, 2)
	a, b := upGateway(t, doc, sts[0], nil), upGateway(t, doc, sts[1], nil)
	waitCatalog(t, a, "mcp.raw.post")
	waitCatalog(t, b, "mcp.raw.post")
	cs, _ := upClient(t, serve(t, a))

	for i := range 3 {
		calls := raw.Calls.Load()
		got := make(chan *mcp.CallToolResult)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire("mcp.raw.post"), Arguments: map[string]any{"n": i}})
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		var id string
		upstreamtest.Eventually(t, 10*time.Second, func() bool {
			list, err := sts[1].Approvals().List(context.Background(), store.ApprovalFilter{State: store.StatePending})
			if err != nil || len(list) == 0 {
				return false
			}
			id = list[0].ID
			return true
		}, "no pending approval on the shared store")
		start := time.Now()
		if _, err := b.Decide(context.Background(), id, true, "admin", ""); err != nil {
			t.Fatal(err)
		}
		res := <-got
		t.Logf("call %d returned %s after the decision on the other replica", i, time.Since(start).Round(time.Millisecond))
		if res == nil || res.IsError {
			t.Fatalf("call %d: %+v", i, res)
		}
		if n := raw.Calls.Load() - calls; n != 1 {
			t.Fatalf("call %d ran %d times upstream, want once", i, n)
		}
		ap, err := sts[0].Approvals().Get(context.Background(), id)
		if err != nil || ap.State != store.StateExecuted {
			t.Fatalf("approval %s: %+v %v, want executed", id, ap, err)
		}
	}
}

// Calls that returned APPROVAL_PENDING and are approved afterwards are run
// by the executors of every replica, racing: each runs exactly once.
func TestApprovedAfterReturnRunsOnceAcrossReplicas(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, `{"name":"post","inputSchema":{"type":"object"}}`)
	doc := fmt.Sprintf("approvals:\n  wait: 10ms\nupstreams:\n  - {id: raw, url: %q}\npolicy:\n  rules:\n    - {upstream: raw, action: approve}\n", srv.URL())
	sts := replicaStores(t, 3)
	var gws []*server.Gateway
	for _, st := range sts {
		gw := upGateway(t, doc, st, nil)
		waitCatalog(t, gw, "mcp.raw.post")
		gws = append(gws, gw)
	}
	ctx := context.Background()
	const calls = 20
	for i := range calls {
		res, err := gws[i%len(gws)].Call(ctx, "mcp.raw.post", []byte(fmt.Sprintf(`{"n":%d}`, i)), server.CallOptions{})
		if err != nil || resultCode(res) != "APPROVAL_PENDING" {
			t.Fatalf("call %d: %+v %v, want APPROVAL_PENDING", i, res, err)
		}
	}
	pending, err := sts[0].Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending})
	if err != nil || len(pending) != calls {
		t.Fatalf("%d pending, %v; want %d", len(pending), err, calls)
	}
	for i, a := range pending {
		if _, err := gws[(i+1)%len(gws)].Decide(ctx, a.ID, true, "admin", ""); err != nil {
			t.Fatal(err)
		}
	}
	upstreamtest.Eventually(t, 30*time.Second, func() bool {
		n, err := sts[0].Approvals().List(ctx, store.ApprovalFilter{State: store.StateExecuted})
		return err == nil && len(n) == calls
	}, "the approved calls were not all executed")
	if n := raw.Calls.Load(); n != calls {
		t.Fatalf("the upstream ran %d calls for %d approvals, want each once", n, calls)
	}
}

// Replicas reading one key file share the vault: a secret set through one
// is read by the other, and after a rotation made through one (a new
// primary key written to the file, every data key re-wrapped, the old key
// retired) the other reads the file again when it meets the new key.
func TestVaultRotationOnOneReplicaReachesAnother(t *testing.T) {
	ctx := context.Background()
	sts := replicaStores(t, 2)
	src := vault.KeySource{File: filepath.Join(t.TempDir(), vault.KeyFileName), Create: true}
	a, b := vault.New(sts[0].Secrets(), src, nil), vault.New(sts[1].Secrets(), src, nil)
	if _, err := a.Set(ctx, "", "api-token", []byte("s3cret")); err != nil {
		t.Fatal(err)
	}
	if v, _, err := b.Get(ctx, "", "api-token"); err != nil || string(v) != "s3cret" {
		t.Fatalf("replica B reads %q, %v", v, err)
	}
	old, err := b.Keys()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Rotate(ctx, nil)
	if err != nil || rep.Rewrapped != 1 || rep.Primary == old.Primary().ID {
		t.Fatalf("rotation on replica A: %+v %v", rep, err)
	}
	v, info, err := b.Get(ctx, "", "api-token")
	if err != nil || string(v) != "s3cret" || info.KeyID != rep.Primary {
		t.Fatalf("replica B after the rotation: %q %+v %v, want the secret wrapped by %s", v, info, err, rep.Primary)
	}
}

// A tool whose definition changed is quarantined on every replica, hidden
// and refused, once one refreshes; accepted through one, it is back on all.
func TestQuarantineAndAcceptAcrossReplicas(t *testing.T) {
	raw, srv := upstreamtest.NewRaw(t, roTool("a"))
	doc := fmt.Sprintf("upstreams:\n  - {id: raw, url: %q}\n", srv.URL())
	sts := replicaStores(t, 2)
	a, b := upGateway(t, doc, sts[0], nil), upGateway(t, doc, sts[1], nil)
	waitCatalog(t, a, "mcp.raw.a")
	waitCatalog(t, b, "mcp.raw.a")
	ctx := context.Background()

	raw.SetTools(`{"name":"a","description":"now with a hidden instruction","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	if _, err := a.Upstreams().Refresh(ctx, "raw"); err != nil {
		t.Fatal(err)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool { _, ok := b.Catalog().Lookup("mcp.raw.a"); return !ok },
		"replica B still lists the tool replica A quarantined")
	if res, err := b.Call(ctx, "mcp.raw.a", []byte(`{}`), server.CallOptions{}); err != nil || resultCode(res) != "POLICY_DENIED" {
		t.Fatalf("a call on replica B to the quarantined tool: %+v %v, want POLICY_DENIED", res, err)
	}
	if _, err := a.Upstreams().Accept(ctx, "raw", "admin", "a"); err != nil {
		t.Fatal(err)
	}
	waitCatalog(t, b, "mcp.raw.a")
	if res, err := b.Call(ctx, "mcp.raw.a", []byte(`{}`), server.CallOptions{}); err != nil || res.IsError {
		t.Fatalf("a call on replica B after the acceptance on A: %+v %v", res, err)
	}
}
