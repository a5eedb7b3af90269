package oauthtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PerUser is a gateway that serves Instance with credentials_mode
// per_user and the OAuth endpoints of a Provider, as a connector's test
// started it: what CheckPerUser needs of it.
type PerUser struct {
	URL      string // the gateway's base URL, as http://127.0.0.1:port
	Instance string
	Tenant   string
	// Alice and Bob are bearer tokens of the principals alice and bob of
	// Tenant; Admin is an admin's.
	Alice, Bob, Admin string
	// Tool is a tool of the instance (its full name) that calls the
	// provider's API; Args are its arguments.
	Tool string
	Args map[string]any
	// RevokesAtProvider says the instance has a revoke_url: revoking a
	// connection revokes its tokens at the provider too.
	RevokesAtProvider bool
}

// CheckPerUser proves per-user connections through the whole gateway:
// alice and bob connect the same instance with different accounts of p
// through the real consent flow over HTTP; each of their calls reaches
// the API with their own token, never the other's; revoking bob's
// connection disconnects bob alone. Calls must reach an API stand-in
// that records its bearers with p.Bearer.
func (g PerUser) CheckPerUser(t *testing.T, p *Provider) {
	t.Helper()
	alice, bob := g.session(t, g.Alice), g.session(t, g.Bob)
	if code, used := g.call(t, p, alice); code != "NOT_CONNECTED" || used.Token != "" {
		t.Fatalf("before connecting, alice's call: %q, reached the API with %q", code, used.Token)
	}
	connect := g.URL + "/connect/" + g.Instance
	if _, err := Connect(connect, g.Alice, "alice-account"); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(connect, g.Bob, "bob-account"); err != nil {
		t.Fatal(err)
	}

	// Each call reaches the API with its caller's own token, in turn.
	tokens := map[string]string{}
	for range 2 {
		for _, c := range []struct {
			account string
			cs      *mcp.ClientSession
		}{{"alice-account", alice}, {"bob-account", bob}} {
			code, used := g.call(t, p, c.cs)
			if code != "" || used.User != c.account {
				t.Fatalf("the call of %s's principal: %q, reached the API as %q", c.account, code, used.User)
			}
			if tokens[c.account] != "" && tokens[c.account] != used.Token {
				t.Fatalf("the calls of %s's principal came with different tokens", c.account)
			}
			tokens[c.account] = used.Token
		}
	}
	if tokens["alice-account"] == tokens["bob-account"] {
		t.Fatal("alice and bob reached the API with the same token")
	}

	// Revoking bob's connection disconnects bob alone.
	revoked := len(p.Revoked())
	req, _ := http.NewRequest("DELETE", g.URL+"/admin/v1/connections/"+g.Instance+"?"+url.Values{"tenant": {g.Tenant}, "principal": {"bob"}}.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+g.Admin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking bob's connection: %s", res.Status)
	}
	for _, tok := range p.Revoked()[revoked:] {
		if tok == tokens["alice-account"] {
			t.Fatal("revoking bob's connection revoked alice's token at the provider")
		}
	}
	if n := len(p.Revoked()) - revoked; g.RevokesAtProvider && n == 0 {
		t.Fatal("revoking bob's connection revoked nothing at the provider")
	}
	if code, used := g.call(t, p, bob); code != "NOT_CONNECTED" || used.Token != "" {
		t.Fatalf("bob after his revocation: %q, reached the API with a token of %q", code, used.User)
	}
	if code, used := g.call(t, p, alice); code != "" || used.User != "alice-account" || used.Token != tokens["alice-account"] {
		t.Fatalf("alice after bob's revocation: %q, reached the API as %q", code, used.User)
	}
}

func (g PerUser) session(t *testing.T, bearer string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: WithBearer(bearer, http.DefaultTransport)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls the tool and returns the result's error code ("" on
// success) and the call that reached the API (zero when none did). It
// fails the test if the tool's calls came with different tokens.
func (g PerUser) call(t *testing.T, p *Provider, cs *mcp.ClientSession) (string, Call) {
	t.Helper()
	before := len(p.Calls())
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: g.Tool, Arguments: g.Args})
	if err != nil {
		t.Fatal(err)
	}
	var used Call
	for i, c := range p.Calls()[before:] {
		if i > 0 && c != used {
			t.Fatalf("one call of %s reached the API with two tokens", g.Tool)
		}
		used = c
	}
	if !res.IsError {
		return "", used
	}
	b, _ := json.Marshal(res)
	var out struct {
		Structured struct {
			Error struct{ Code string }
		} `json:"structuredContent"`
		Meta map[string]struct{ Code string } `json:"_meta"`
	}
	json.Unmarshal(b, &out)
	code := out.Structured.Error.Code + out.Meta["io.legate/error"].Code
	if code == "" {
		code = "an error without a code: " + string(b)
	}
	return code, used
}
