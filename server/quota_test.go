package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// quotaStores are the stores budgets are counted in: the embedded one and
// PostgreSQL (skipped without one, outside CI).
func quotaStores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"sqlite":   func(t *testing.T) store.Store { return memStore(t) },
		"postgres": func(t *testing.T) store.Store { return replicaStores(t, 1)[0] },
	}
}

// quotaGateway is the echo gateway of testConfig with budgets, over st,
// and its /mcp URL.
func quotaGateway(t *testing.T, st store.Store, budgets string) (*server.Gateway, string) {
	t.Helper()
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	cfg, err := config.Parse([]byte(testConfig+budgets), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st, AdminToken: "root-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	return gw, serve(t, gw)
}

// callIn calls tool as principal of tenant and returns the error of its
// result (nil for a success).
func callIn(t *testing.T, gw *server.Gateway, tenant, principal, tool, text string) map[string]any {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"text": text})
	res, err := gw.Call(context.Background(), tool, args, server.CallOptions{Caller: connectors.Caller{Principal: principal, Tenant: tenant}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		return nil
	}
	return gatewayError(t, res)
}

// wantExceeded checks that e is a QUOTA_EXCEEDED of the budget of scope,
// saying when it resets (within window seconds).
func wantExceeded(t *testing.T, e map[string]any, budget, scope string, window float64) {
	t.Helper()
	if e == nil || e["code"] != "QUOTA_EXCEEDED" || e["budget"] != budget || e["scope"] != scope {
		t.Fatalf("want QUOTA_EXCEEDED of the %s budget of the %s, got %v", budget, scope, e)
	}
	after, _ := e["retry_after_seconds"].(float64)
	if after <= 0 || after > window || e["resets_at"] == nil || !strings.Contains(fmt.Sprint(e["message"]), "resets at") {
		t.Fatalf("the refusal does not say when the budget resets: %v", e)
	}
}

// Each budget kind, on each store: a principal's calls, a tenant's calls
// (its principals together), a principal's result bytes and write calls.
// Another principal, tenant or kind of call is not refused; the refusals
// are audited and counted.
func TestBudgets(t *testing.T) {
	for name, open := range quotaStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("calls per principal", func(t *testing.T) {
				gw, url := quotaGateway(t, open(t), "budgets:\n  per_principal:\n    calls: {limit: 2, window: 1h}\n")
				for i := range 2 {
					if e := callIn(t, gw, "acme", "alice", "e.echo", "x"); e != nil {
						t.Fatalf("call %d within the budget: %v", i+1, e)
					}
				}
				wantExceeded(t, callIn(t, gw, "acme", "alice", "e.echo", "x"), "calls", "principal", 3600)
				if e := callIn(t, gw, "acme", "bob", "e.echo", "x"); e != nil {
					t.Fatalf("another principal: %v", e)
				}
				if e := callIn(t, gw, "other", "alice", "e.echo", "x"); e != nil {
					t.Fatalf("the same name in another tenant: %v", e)
				}
				if n := metric(t, url, `legate_budget_refused_total{budget="calls",scope="principal"}`); n != 1 {
					t.Errorf("legate_budget_refused_total: %g, want 1", n)
				}
				// The admin API (and the panel through it) shows each use.
				var got struct{ Budgets []quota.Usage }
				getJSON(t, strings.TrimSuffix(url, "/mcp"), "/admin/v1/budgets", &got)
				use := map[string]int64{}
				for _, u := range got.Budgets {
					if u.Scope != "principal" || u.Budget != "calls" || u.Limit != 2 || !u.ResetsAt.After(time.Now()) {
						t.Errorf("a budget's use: %+v", u)
					}
					use[u.Tenant+"/"+u.Principal] = u.Used
				}
				if want := map[string]int64{"acme/alice": 2, "acme/bob": 1, "other/alice": 1}; !maps.Equal(use, want) {
					t.Errorf("GET /admin/v1/budgets: %v, want %v", use, want)
				}
				// Through MCP too (the fast path of a session, then a
				// stateless client), as the configured principal.
				for i, version := range []string{"2025-11-25", "2025-11-25", "2026-07-28"} {
					res, err := connect(t, url, version).CallTool(context.Background(), &mcp.CallToolParams{Name: wire("e.echo"), Arguments: map[string]any{"text": "x"}})
					if err != nil {
						t.Fatal(err)
					}
					if e := gatewayError(t, res); (e != nil) != (i == 2) || i == 2 && e["code"] != "QUOTA_EXCEEDED" {
						t.Fatalf("MCP call %d (%s): %v", i+1, version, e)
					}
				}
			})
			t.Run("calls per tenant", func(t *testing.T) {
				gw, _ := quotaGateway(t, open(t), "budgets:\n  per_tenant:\n    calls: {limit: 3}\n")
				for _, p := range []string{"alice", "bob", "alice"} {
					if e := callIn(t, gw, "acme", p, "e.echo", "x"); e != nil {
						t.Fatalf("%s within the tenant's budget: %v", p, e)
					}
				}
				wantExceeded(t, callIn(t, gw, "acme", "carol", "e.echo", "x"), "calls", "tenant", 3600)
				if e := callIn(t, gw, "globex", "alice", "e.echo", "x"); e != nil {
					t.Fatalf("another tenant: %v", e)
				}
			})
			t.Run("result bytes", func(t *testing.T) {
				gw, _ := quotaGateway(t, open(t), "budgets:\n  per_principal:\n    result_bytes: {limit: 200, window: 10m}\n")
				if e := callIn(t, gw, "", "alice", "e.echo", strings.Repeat("a", 120)); e != nil {
					t.Fatalf("the first call: %v", e)
				}
				// 120 bytes of text and the JSON around them are charged
				// (about 160): the budget is spent once they pass 200, not
				// before.
				if e := callIn(t, gw, "", "alice", "e.echo", "b"); e != nil {
					t.Fatalf("a call while some of the budget was left: %v", e)
				}
				wantExceeded(t, callIn(t, gw, "", "alice", "e.echo", "c"), "result_bytes", "principal", 600)
			})
			t.Run("writes", func(t *testing.T) {
				st := open(t)
				gw, _ := quotaGateway(t, st, "budgets:\n  per_principal:\n    writes: {limit: 1}\n")
				if e := callIn(t, gw, "acme", "alice", "e.fail", "CONFLICT"); e == nil || e["code"] != "CONFLICT" {
					t.Fatalf("the first write ran: %v", e)
				}
				e := callIn(t, gw, "acme", "alice", "e.fail", "CONFLICT")
				wantExceeded(t, e, "writes", "principal", 86400)
				if e := callIn(t, gw, "acme", "alice", "e.echo", "x"); e != nil {
					t.Fatalf("a read after the writes budget was spent: %v", e)
				}
				var rows []store.AuditRow
				waitFor(t, "the refused write's audit row", func() bool {
					rows, _ = st.Audit().Query(context.Background(), store.AuditQuery{})
					return len(rows) == 3
				})
				n := 0
				for _, r := range rows {
					if r.Outcome == "QUOTA_EXCEEDED" && r.Tool == "e.fail" && r.Principal == "alice" {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("audit rows: %+v, want one QUOTA_EXCEEDED", rows)
				}
			})
		})
	}
}

// A tenant's budget holds across replicas sharing a store: calls through
// either count against it, and a call past it is refused on both.
func TestBudgetAcrossReplicas(t *testing.T) {
	sts := replicaStores(t, 2)
	const doc = "budgets:\n  per_tenant:\n    calls: {limit: 4}\n  per_principal:\n    writes: {limit: 2}\n"
	a, _ := quotaGateway(t, sts[0], doc)
	b, _ := quotaGateway(t, sts[1], doc)
	for i, gw := range []*server.Gateway{a, b, a, b} {
		if e := callIn(t, gw, "acme", "alice", "e.echo", "x"); e != nil {
			t.Fatalf("call %d within the tenant's budget: %v", i+1, e)
		}
	}
	wantExceeded(t, callIn(t, a, "acme", "bob", "e.echo", "x"), "calls", "tenant", 3600)
	wantExceeded(t, callIn(t, b, "acme", "bob", "e.echo", "x"), "calls", "tenant", 3600)
	for i, gw := range []*server.Gateway{a, b} {
		if e := callIn(t, gw, "globex", "alice", "e.fail", "CONFLICT"); e == nil || e["code"] != "CONFLICT" {
			t.Fatalf("write %d within the budget: %v", i+1, e)
		}
	}
	wantExceeded(t, callIn(t, a, "globex", "alice", "e.fail", "CONFLICT"), "writes", "principal", 86400)
}
