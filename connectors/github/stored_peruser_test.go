package github_test

// A per-user instance added at run time, through the admin API, behaves
// as one of the config file: a caller without a connection is told where
// to connect, and people connect their own accounts through the flow.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server/servertest"
)

func TestPerUserStoredThroughTheAdminAPI(t *testing.T) {
	ctx := context.Background()
	s := newStandin(t)
	s.seed(3)
	g := servertest.Start(t, `auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}`)
	bearer := func(name string, role string) string {
		return g.Token(t, auth.Principal{Name: name, Role: role, Tenant: "acme"})
	}
	ops := g.Token(t, auth.Principal{Name: "ops", Role: auth.RoleAdmin})
	adminCall := func(method, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, g.URL+"/admin/v1/connectors", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ops)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	// Validation names the field.
	if code, body := adminCall("POST", `{"type":"github","credentials_mode":"per_user"}`); code != http.StatusBadRequest || !strings.Contains(body, "oauth: is required with credentials_mode per_user") {
		t.Fatalf("per_user without an oauth app: %d %s", code, body)
	}
	if code, body := adminCall("POST", `{"type":"github","credentials_mode":"per_user","oauth":{}}`); code != http.StatusBadRequest || !strings.Contains(body, "oauth.client_id") {
		t.Fatalf("an oauth app without a client id: %d %s", code, body)
	}

	add, _ := json.Marshal(map[string]any{
		"type": "github", "credentials_mode": "per_user",
		"config": map[string]any{"base_url": s.srv.URL + "/", "allow_private_networks": true, "retry_backoff": "1ms"},
		"oauth": map[string]any{"client_id": standinClientID, "scopes": []string{"repo"},
			"authorize_url": s.srv.URL + "/login/oauth/authorize", "token_url": s.srv.URL + "/login/oauth/token"},
		"secrets": map[string]string{"oauth.client_secret": standinClientSecret},
	})
	if code, body := adminCall("POST", string(add)); code != http.StatusCreated || !strings.Contains(body, `"credentials_mode": "per_user"`) || strings.Contains(body, standinClientSecret) {
		t.Fatalf("adding: %d %s", code, body)
	}
	if err := g.GW.Reload(ctx, nil); err != nil { // what the store watch does within a second
		t.Fatal(err)
	}
	code, body := adminCall("GET", "")
	var out struct {
		Connectors []struct {
			CredentialsMode string `json:"credentials_mode"`
			OAuth           struct {
				ClientID     string            `json:"client_id"`
				ClientSecret map[string]string `json:"client_secret"`
			}
		}
	}
	json.Unmarshal([]byte(body), &out)
	list := out.Connectors
	if code != 200 || len(list) != 1 || list[0].CredentialsMode != "per_user" || list[0].OAuth.ClientID != standinClientID ||
		list[0].OAuth.ClientSecret["vault"] != "github.oauth.client_secret" || strings.Contains(body, standinClientSecret) {
		t.Fatalf("listing: %d %s", code, body)
	}

	// A caller without a connection is told where to make one.
	alice := bearer("alice", auth.RoleUser)
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: oauthtest.WithBearer(alice, http.DefaultTransport)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__list_issues", Arguments: map[string]any{"repo": "acme/api"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	if !res.IsError || !strings.Contains(string(raw), `"code":"NOT_CONNECTED"`) || !strings.Contains(string(raw), `"connect_url":"`+g.URL+`/connect/github"`) {
		t.Fatalf("an unconnected caller got %s", raw)
	}

	oauthtest.PerUser{URL: g.URL, Instance: "github", Tenant: "acme",
		Alice: alice, Bob: bearer("bob", auth.RoleUser), Admin: ops,
		Tool: "github__list_issues", Args: map[string]any{"repo": "acme/api"}}.CheckPerUser(t, s.oauth)
}
