package sqlite_test

import (
	"context"
	"errors"
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

// A request id is never reused: a second request with it is refused as
// existing, and the first is kept as it was.
func TestApprovalIDTakenExists(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	a := &store.Approval{ID: "ap_1", Principal: "p", Tool: "t.x", Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := st.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := *a
	b.Principal = "other"
	if err := st.Approvals().Create(ctx, &b); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if got, err := st.Approvals().Get(ctx, "ap_1"); err != nil || got.Principal != "p" {
		t.Fatalf("kept: %+v %v", got, err)
	}
}
