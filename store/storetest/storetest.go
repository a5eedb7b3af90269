// Package storetest is the conformance suite every store backend passes:
//
//	func TestSuite(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			st, err := mybackend.Open(context.Background(), t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { st.Close() })
//			return st
//		})
//	}
//
// It writes down what the rest of Legate relies on, sub-store by
// sub-store: keys and their sentinel errors, orderings, filters, and the
// approval inbox's compare-and-set transitions (decided once, claimed by
// exactly one of many racing callers, finished once, an interrupted run
// failed and never run again). Each test opens a store of its own.
//
// A backend that several processes share (the replicas of a deployment on
// one database) also runs RunShared, with an opener of several stores on
// one database: what one writes the others read, its races have one winner
// across stores, a reader following the audit log by id misses no row of
// concurrent writers, and a store.ApprovalWatcher hears of another store's
// changes.
//
// Times go in whole seconds (milliseconds for approvals and operations, microseconds for
// audit rows), the precision the embedded store keeps; a backend must give
// them back equal.
package storetest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/storetest/eventstest"
	"github.com/legate-mcp/legate/store/storetest/internal/suite"
	"github.com/legate-mcp/legate/store/storetest/kbtest"
	"github.com/legate-mcp/legate/store/storetest/quotastest"
	"github.com/legate-mcp/legate/store/storetest/vectorstest"
)

// base and must are the suite's clock and check (package suite).
var (
	base = suite.Base
	must = suite.Must
)

// Opener opens an empty store for one test; it closes the store in
// t.Cleanup.
type Opener func(t *testing.T) store.Store

// Run runs the whole suite against the stores open opens.
func Run(t *testing.T, open Opener) {
	for _, s := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"Connectors", testConnectors},
		{"Upstreams", testUpstreams},
		{"Pins", testPins},
		{"Approvals", testApprovals},
		{"Audit", testAudit},
		{"Secrets", testSecrets},
		{"Tokens", testTokens},
		{"Operations", testOperations},
		{"Users", testUsers},
		{"OAuthClients", testOAuthClients},
		{"OAuthRequests", testOAuthRequests},
		{"OAuthTokens", testOAuthTokens},
		{"AgentRuns", testAgentRuns},
		{"Results", testResults},
		{"Embeddings", func(t *testing.T, open Opener) { vectorstest.Run(t, open(t).Embeddings()) }},
		{"Quotas", func(t *testing.T, open Opener) { quotastest.Run(t, open(t).Quotas()) }},
		{"KB", func(t *testing.T, open Opener) { kbtest.Run(t, open(t).KB()) }},
		{"Events", func(t *testing.T, open Opener) {
			eventstest.Run(t, func(t *testing.T) store.EventStore { return open(t).Events() })
		}},
	} {
		t.Run(s.name, func(t *testing.T) { s.run(t, open) })
	}
}

// sameJSON reports whether a and b hold the same JSON value, whatever
// their spacing or key order: a backend may store JSON in a native type.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

// must fails the test on err.
