package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

const viewsConfig = `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
auth: {tokens: true}
profiles:
  - {name: small, exclude: ["*.boom"], max_tools: 2, tool_names: canonical}
connectors:
  - {id: shared, type: echo-test}
  - {id: acme, type: echo-test, tenant: acme}
  - {id: globex, type: echo-test, tenant: globex}
`

func viewsGateway(t *testing.T) (string, func(auth.Principal) *mcp.ClientSession) {
	t.Helper()
	st := memStore(t)
	cfg, err := config.Parse([]byte(viewsConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	url := serve(t, gw)
	return url, func(p auth.Principal) *mcp.ClientSession {
		tok := token(t, st, p)
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
}

func names(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

func TestTenantsSeeTheirToolsAndSharedOnes(t *testing.T) {
	_, as := viewsGateway(t)
	acme := as(auth.Principal{Name: "a", Tenant: "acme"})
	globex := as(auth.Principal{Name: "g", Tenant: "globex"})
	got := names(t, acme)
	if !slices.Contains(got, "acme__echo") || !slices.Contains(got, "shared__echo") || slices.Contains(got, "globex__echo") {
		t.Fatalf("acme sees %v", got)
	}
	if got := names(t, globex); slices.Contains(got, "acme__echo") || !slices.Contains(got, "globex__echo") {
		t.Fatalf("globex sees %v", got)
	}
	// Calling another tenant's tool, by either name: unknown.
	for _, name := range []string{"globex__echo", "globex.echo"} {
		_, err := acme.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("acme called %s: %v", name, err)
		}
	}
	if res, err := acme.CallTool(context.Background(), &mcp.CallToolParams{Name: "acme__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Fatalf("acme's own tool: %v %v", res, err)
	}
}

func TestProfileNarrowsOnePrincipalsView(t *testing.T) {
	_, as := viewsGateway(t)
	small := as(auth.Principal{Name: "s", Profile: "small"})
	full := as(auth.Principal{Name: "f"})
	got := names(t, small)
	// Shared tools by canonical name, none matching *.boom, the first two.
	if want := []string{"http.request", "legate.approval_status"}; !slices.Equal(got, want) {
		t.Fatalf("profile small lists %v, want %v", got, want)
	}
	if got := names(t, full); !slices.Contains(got, "shared__boom") || len(got) != 7 { // legate.result_read among the built-in tools
		t.Fatalf("no profile lists %v", got)
	}
	_, err := small.CallTool(context.Background(), &mcp.CallToolParams{Name: "shared.echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("a hidden tool was callable: %v", err)
	}
}

func TestApproversSeeOnlyTheirTenant(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	cfg, err := config.Parse([]byte("approvals: {wait: 10ms}\nauth: {tokens: true}\nconnectors:\n  - {id: g, type: echo-test, tenant: globex}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	url := strings.TrimSuffix(serve(t, gw), "/mcp")
	p := &auth.Principal{Name: "gina", Tenant: "globex", Role: auth.RoleUser}
	res, err := gw.Call(ctx, "g.fail", []byte(`{"text":"NOT_FOUND"}`), server.CallOptions{Principal: p})
	if err != nil {
		t.Fatal(err)
	}
	_, id := errorCode(t, res)
	if id == "" {
		t.Fatalf("no approval: %v", structured(t, res))
	}
	acme := token(t, st, auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleApprover})
	globex := token(t, st, auth.Principal{Name: "gus", Tenant: "globex", Role: auth.RoleApprover})
	do := func(method, path, tok string) int {
		req, _ := http.NewRequest(method, url+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := do("GET", "/admin/v1/approvals/"+id, acme); s != http.StatusNotFound {
		t.Fatalf("another tenant's approver saw the request: %d", s)
	}
	if s := do("POST", "/admin/v1/approvals/"+id+"/approve", acme); s != http.StatusNotFound {
		t.Fatalf("another tenant's approver decided: %d", s)
	}
	if s := do("POST", "/admin/v1/approvals/"+id+"/approve", globex); s != http.StatusOK {
		t.Fatalf("the tenant's approver could not decide: %d", s)
	}
	// An approval id is a reference of its tenant: another tenant's caller
	// cannot read it through legate.approval_status.
	other := &auth.Principal{Name: "ann", Tenant: "acme"}
	res, _ = gw.Call(ctx, "legate.approval_status", []byte(`{"approval_id":"`+id+`"}`), server.CallOptions{Principal: other})
	if code, _ := errorCode(t, res); code != "NOT_FOUND" {
		t.Fatalf("approval_status across tenants: %v", structured(t, res))
	}
}
