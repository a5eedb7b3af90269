package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	_ "github.com/legate-mcp/legate/connectors/github"
	"github.com/legate-mcp/legate/server/servertest"
)

// githubWho is a GitHub stand-in that answers one issue and keeps the
// token each request carried.
type githubWho struct {
	mu     sync.Mutex
	tokens []string
}

func (g *githubWho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.tokens = append(g.tokens, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/api/v3/repos/acme/api/issues/1" && r.URL.Path != "/repos/acme/api/issues/1" {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"message":"Not Found"}`))
		return
	}
	w.Write([]byte(`{"number":1,"title":"Checkout fails","state":"open","html_url":"https://github.example/acme/api/issues/1","user":{"login":"octo"}}`))
}

func (g *githubWho) last() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.tokens) == 0 {
		return ""
	}
	return g.tokens[len(g.tokens)-1]
}

// A person's own token (legate connect ID --token, here through the admin
// API it shares Manager.SetToken with) is used for that person's calls
// only: another principal's call to the per_user instance is NOT_CONNECTED
// naming --token, and to the per_user_or_shared one uses the shared
// token. The token never appears in an answer; once revoked, the person is
// not connected again.
func TestPersonalTokenUsedForTheirCallsOnly(t *testing.T) {
	gh := &githubWho{}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	t.Setenv("SHARED_GITHUB_TOKEN", "ghp_shared_team_token")
	g := servertest.Start(t, `
auth: {tokens: true}
policy: {rules: [{tool: "*", action: allow}]}
connectors:
  - {id: gh, type: github, config: {base_url: "`+srv.URL+`/", allow_private_networks: true}, credentials_mode: per_user, user_credential: token}
  - {id: ghs, type: github, config: {base_url: "`+srv.URL+`/", allow_private_networks: true}, credentials_mode: per_user_or_shared, user_credential: token, credentials: {token: {env: SHARED_GITHUB_TOKEN}}}
`)
	// The admin API's connection routes take any approver, for their own
	// connections.
	alice := g.Token(t, auth.Principal{Name: "alice", Tenant: "acme", Role: auth.RoleApprover})
	bob := g.Token(t, auth.Principal{Name: "bob", Tenant: "acme", Role: auth.RoleUser})

	put := func(tok, instance, body string) int {
		req, _ := http.NewRequest(http.MethodPut, g.URL+"/admin/v1/connections/"+instance+"/token", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	call := func(tok, tool string) *mcp.CallToolResult {
		t.Helper()
		hc := &http.Client{Transport: bearer{tok, http.DefaultTransport}}
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"repo": "acme/api", "number": 1}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		b, _ := json.Marshal(res)
		return string(b)
	}

	if res := call(alice, "gh__get_issue"); !res.IsError || !strings.Contains(text(res), "NOT_CONNECTED") || !strings.Contains(text(res), "legate connect gh --token") {
		t.Fatalf("alice, not connected yet: %s", text(res))
	}
	if code := put(alice, "gh", `{"token":"ghp_alice_own"}`); code != http.StatusOK {
		t.Fatalf("storing alice's token: %d", code)
	}
	if code := put(alice, "gh", `{"token":"two words"}`); code != http.StatusBadRequest {
		t.Fatalf("a token with a space: %d, want 400", code)
	}
	if code := put(alice, "nowhere", `{"token":"x-token"}`); code != http.StatusNotFound {
		t.Fatalf("a token for no instance: %d, want 404", code)
	}

	res := call(alice, "gh__get_issue")
	if res.IsError || gh.last() != "ghp_alice_own" {
		t.Fatalf("alice's call: %s; the provider saw %q, want her own token", text(res), gh.last())
	}
	if strings.Contains(text(res), "ghp_alice_own") {
		t.Fatalf("an answer holds the token: %s", text(res))
	}
	before := len(gh.tokens)
	if res := call(bob, "gh__get_issue"); !res.IsError || !strings.Contains(text(res), "NOT_CONNECTED") {
		t.Fatalf("bob's call to the per_user instance: %s", text(res))
	}
	if len(gh.tokens) != before {
		t.Fatalf("bob's call reached the provider with %q", gh.last())
	}
	if res := call(bob, "ghs__get_issue"); res.IsError || gh.last() != "ghp_shared_team_token" {
		t.Fatalf("bob's call to the per_user_or_shared instance: %s; the provider saw %q, want the shared token", text(res), gh.last())
	}
	if res := call(alice, "ghs__get_issue"); res.IsError || gh.last() != "ghp_shared_team_token" {
		t.Fatalf("alice, not connected to the per_user_or_shared instance: %s; the provider saw %q, want the shared token", text(res), gh.last())
	}
	if code := put(alice, "ghs", `{"token":"ghp_alice_second"}`); code != http.StatusOK {
		t.Fatalf("storing alice's second token: %d", code)
	}
	if res := call(alice, "ghs__get_issue"); res.IsError || gh.last() != "ghp_alice_second" {
		t.Fatalf("alice's call to the per_user_or_shared instance: %s; the provider saw %q, want her own token", text(res), gh.last())
	}

	req, _ := http.NewRequest(http.MethodDelete, g.URL+"/admin/v1/connections/gh?principal=alice&tenant=acme", nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking: %d", resp.StatusCode)
	}
	if res := call(alice, "gh__get_issue"); !res.IsError || !strings.Contains(text(res), "NOT_CONNECTED") {
		t.Fatalf("alice after revoking: %s", text(res))
	}
}
