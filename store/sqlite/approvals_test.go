package sqlite_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func TestApprovalFilterNeverTakesTheSharedTenantForAll(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for _, tenant := range []string{"acme", "globex", ""} {
		a := &store.Approval{ID: "id-" + tenant, Principal: "p", Tenant: tenant, Tool: "t.x", Class: "write",
			Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := st.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		f    store.ApprovalFilter
		want []string
	}{
		"zero filter: the shared tenant": {store.ApprovalFilter{}, []string{""}},
		"one tenant":                     {store.ApprovalFilter{Tenant: "acme"}, []string{"acme"}},
		"every tenant":                   {store.ApprovalFilter{AllTenants: true}, []string{"", "acme", "globex"}},
		"every tenant, one state":        {store.ApprovalFilter{AllTenants: true, State: store.StatePending}, []string{"", "acme", "globex"}},
		"another state":                  {store.ApprovalFilter{AllTenants: true, State: store.StateApproved}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			list, err := st.Approvals().List(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range list {
				got = append(got, a.Tenant)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("tenants %q, want %q", got, tc.want)
			}
		})
	}
}
