package quota_test

import (
	"context"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/store/sqlite"
)

// What budgets cost a call: Admit and Done over the embedded store (in
// memory), with a principal's calls budget alone (one count taken), and
// with every budget of a principal and a tenant (four counts taken, two
// checked, two charged), against calls no budget is set for (a nil gate).
func BenchmarkBudgets(b *testing.B) {
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	every := config.Allowance{Limit: 1 << 40, Window: legate.Duration(time.Hour)}
	all := config.Budget{Calls: every, ResultBytes: every, Writes: every}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		gate *quota.Gate
	}{
		{"none", quota.NewGate(nil, quota.NewBudgets(config.Budgets{}, st.Quotas(), nil))},
		{"calls", quota.NewGate(nil, quota.NewBudgets(config.Budgets{PerPrincipal: config.Budget{Calls: every}}, st.Quotas(), nil))},
		{"all", quota.NewGate(nil, quota.NewBudgets(config.Budgets{PerPrincipal: all, PerTenant: all}, st.Quotas(), nil))},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				t, err := c.gate.Admit(ctx, quota.Call{Tenant: "acme", Principal: "alice", Tool: "e.post", Write: true})
				if err != nil {
					b.Fatal(err)
				}
				t.Done(ctx, 512, false)
			}
		})
	}
}
