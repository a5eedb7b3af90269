//go:build unix

package stripe_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// BenchmarkGetCustomer compares get_customer through the connector
// (Tool.Run: arguments decoded and checked, the key resolved, the kit's
// limiter and attempt, the ref signed, customer.v1 built) with stripe-go
// calling the same stripe-mock directly (V1Customers.Retrieve), in the
// same run. "both" interleaves the two, alternating which goes first, so
// that a machine shared with other work slows both alike; it reports each
// side's wall time and process CPU time per call (stripe-mock's included,
// the same for both) and ratio, the connector's calls per second over
// stripe-go's.
func BenchmarkGetCustomer(b *testing.B) {
	srv := httptest.NewServer(mock)
	b.Cleanup(srv.Close)
	direct := stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL:               stripe.String(srv.URL),
		HTTPClient:        &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	in := &instance{c: connectortest.Build(b, "stripe", "stripe", "base_url: "+srv.URL+"\nallow_private_networks: true")}
	tool := in.tool(b, "get_customer")
	args := json.RawMessage(`{"customer_id":"cus_bench"}`)
	creds := connectortest.Creds{"secret_key": key}
	ctx := context.Background()
	viaStripe := func() {
		cu, err := direct.V1Customers.Retrieve(ctx, "cus_bench", nil)
		if err != nil || cu.ID != "cus_bench" {
			b.Fatal(cu, err)
		}
	}
	viaConnector := func() {
		res, err := tool.Run(ctx, &connectors.Call{Tool: "get_customer", Args: args, Caller: connectors.Caller{Tenant: "t1"}, Credentials: creds})
		if err != nil || res.Structured.(model.Customer).ExternalID != "cus_bench" {
			b.Fatal(res, err)
		}
	}
	b.Run("stripe-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			viaStripe()
		}
	})
	b.Run("connector", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			viaConnector()
		}
	})
	b.Run("both", func(b *testing.B) {
		var wall, cpu [2]time.Duration // 0 stripe-go, 1 connector
		sides := [2]func(){viaStripe, viaConnector}
		measure := func(side int) {
			w0, c0 := time.Now(), cpuTime()
			sides[side]()
			wall[side] += time.Since(w0)
			cpu[side] += cpuTime() - c0
		}
		n := 0
		for b.Loop() {
			first := n % 2
			measure(first)
			measure(1 - first)
			n++
		}
		per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
		b.ReportMetric(per(wall[0]), "stripe-go-ns/call")
		b.ReportMetric(per(wall[1]), "connector-ns/call")
		b.ReportMetric(per(cpu[0]), "stripe-go-cpu-ns/call")
		b.ReportMetric(per(cpu[1]), "connector-cpu-ns/call")
		b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio")
	})
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
