package servertest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
)

// A gateway started from a config naming its own URL serves it: the
// RFC 9728 metadata names the resource at that URL, a token made in its
// store opens an MCP session, and WaitSession returns once the admin API
// lists the session.
func TestStartServesTheConfig(t *testing.T) {
	g := servertest.Start(t, `auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}`)
	res, err := http.Get(g.URL + auth.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var meta struct{ Resource string }
	if err := json.NewDecoder(res.Body).Decode(&meta); err != nil {
		t.Fatal(err)
	}
	if meta.Resource != g.URL+"/mcp" {
		t.Fatalf("resource %q, want %q", meta.Resource, g.URL+"/mcp")
	}
	bearer := g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser})
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: oauthtest.WithBearer(bearer, http.DefaultTransport)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	g.WaitSession(t, cs.ID())
}

// With and Env reach server.New and config.Parse: the admin API takes
// the admin token given, and ${NAME} expands through the lookup given
// (here to a Host the gateway then accepts).
func TestOptions(t *testing.T) {
	const token = "servertest-admin"
	g := servertest.Start(t, `allowed_hosts: ["${EXTRA_HOST}"]`,
		servertest.Env(func(name string) (string, bool) { return "legate.internal", name == "EXTRA_HOST" }),
		servertest.With(func(o *server.Options) { o.AdminToken = token }))
	req, _ := http.NewRequest("GET", g.URL+"/admin/v1/sessions", nil)
	req.Host = "legate.internal"
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the admin API with the admin token, as legate.internal: %s", res.Status)
	}
}
