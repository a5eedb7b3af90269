package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// tenantInbox serves a gateway with authentication on whose inbox holds one
// pending request of tenant acme, one of globex and one of the shared
// tenant (""), made through a shared connector. It returns the admin API's
// base URL and the ids by tenant.
func tenantInbox(t *testing.T) (*sqlite.Store, string, map[string]string) {
	t.Helper()
	st, _, url, ids := tenantInboxGateway(t)
	return st, url, ids
}

// tenantInboxGateway is tenantInbox with its gateway.
func tenantInboxGateway(t *testing.T) (*sqlite.Store, *server.Gateway, string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	st := memStore(t)
	cfg, err := config.Parse([]byte("approvals: {wait: 10ms}\nauth: {tokens: true}\nconnectors:\n  - {id: s, type: echo-test}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.StartAudit(ctx)
	ids := map[string]string{}
	for _, tenant := range []string{"acme", "globex", ""} {
		p := &auth.Principal{Name: "caller-" + tenant, Tenant: tenant, Role: auth.RoleUser}
		res, err := gw.Call(ctx, "s.fail", []byte(`{"text":"NOT_FOUND"}`), server.CallOptions{Principal: p})
		if err != nil {
			t.Fatal(err)
		}
		if _, ids[tenant] = errorCode(t, res); ids[tenant] == "" {
			t.Fatalf("tenant %q: no approval: %v", tenant, structured(t, res))
		}
	}
	return st, gw, strings.TrimSuffix(serve(t, gw), "/mcp") + "/admin/v1/approvals", ids
}

// listApprovals gets path with tok and returns the status and the tenants
// of the requests listed.
func listApprovals(t *testing.T, url, tok string) (int, []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Approvals []admin.ApprovalView `json:"approvals"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	var tenants []string
	for _, a := range body.Approvals {
		tenants = append(tenants, a.Tenant)
	}
	slices.Sort(tenants)
	return resp.StatusCode, tenants
}

func TestApprovalListIsScopedToTheCallersTenant(t *testing.T) {
	st, url, _ := tenantInbox(t)
	shared := token(t, st, auth.Principal{Name: "shared", Role: auth.RoleApprover})
	acme := token(t, st, auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleApprover})
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	for name, tc := range map[string]struct {
		tok, query string
		status     int
		tenants    []string
	}{
		"approver without a tenant: the shared tenant only": {shared, "", http.StatusOK, []string{""}},
		"approver without a tenant asks for acme":           {shared, "?tenant=acme", http.StatusForbidden, nil},
		"approver of acme":                            {acme, "", http.StatusOK, []string{"acme"}},
		"approver of acme, its own tenant named":      {acme, "?tenant=acme", http.StatusOK, []string{"acme"}},
		"approver of acme asks for globex":            {acme, "?tenant=globex", http.StatusForbidden, nil},
		"approver of acme asks for the shared tenant": {acme, "?tenant=", http.StatusForbidden, nil},
		"admin: every tenant":                         {root, "", http.StatusOK, []string{"", "acme", "globex"}},
		"admin, one tenant":                           {root, "?tenant=globex", http.StatusOK, []string{"globex"}},
		"admin, the shared tenant":                    {root, "?tenant=", http.StatusOK, []string{""}},
	} {
		t.Run(name, func(t *testing.T) {
			status, tenants := listApprovals(t, url+tc.query, tc.tok)
			if status != tc.status || !slices.Equal(tenants, tc.tenants) {
				t.Fatalf("status %d, tenants %q; want %d, %q", status, tenants, tc.status, tc.tenants)
			}
		})
	}
}

func TestSharedApproverSeesOnlySharedRequests(t *testing.T) {
	st, url, ids := tenantInbox(t)
	shared := token(t, st, auth.Principal{Name: "shared", Role: auth.RoleApprover})
	do := func(method, path string) int {
		req, _ := http.NewRequest(method, url+path, nil)
		req.Header.Set("Authorization", "Bearer "+shared)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tenant := range []string{"acme", "globex"} {
		if s := do("GET", "/"+ids[tenant]); s != http.StatusNotFound {
			t.Errorf("%s's request read by the shared approver: %d", tenant, s)
		}
		if s := do("POST", "/"+ids[tenant]+"/deny"); s != http.StatusNotFound {
			t.Errorf("%s's request decided by the shared approver: %d", tenant, s)
		}
	}
	if s := do("GET", "/"+ids[""]); s != http.StatusOK {
		t.Errorf("the shared request: %d", s)
	}
	if s := do("POST", "/"+ids[""]+"/deny"); s != http.StatusOK {
		t.Errorf("deciding the shared request: %d", s)
	}
}

func TestAdminCrossTenantReadsAreAudited(t *testing.T) {
	st, url, ids := tenantInbox(t)
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	if status, _ := listApprovals(t, url, root); status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	req, _ := http.NewRequest("GET", url+"/"+ids["acme"], nil)
	req.Header.Set("Authorization", "Bearer "+root)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("get: %v %v", resp, err)
	}
	var rows []store.AuditRow
	waitFor(t, "the audit rows of the admin's reads", func() bool {
		rows, _ = st.Audit().Query(context.Background(), store.AuditQuery{Principal: "root"})
		return len(rows) >= 2
	})
	for _, r := range rows {
		if !strings.HasPrefix(r.Tool, "admin.approvals.") || r.Source != "admin" || r.Detail == "" {
			t.Errorf("audit row %+v", r)
		}
	}
}

func TestApprovalListLimitIsBounded(t *testing.T) {
	st, url, _ := tenantInbox(t)
	now := time.Now()
	for i := range 1005 {
		a := &store.Approval{ID: fmt.Sprintf("bulk-%d", i), Principal: "p", Tool: "s.fail", Class: "write",
			Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := st.Approvals().Create(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	if status, tenants := listApprovals(t, url+"?limit=1000000", root); status != http.StatusOK || len(tenants) != admin.MaxApprovalList {
		t.Fatalf("status %d, %d requests listed, want %d", status, len(tenants), admin.MaxApprovalList)
	}
}
