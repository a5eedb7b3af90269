package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server"
)

// `legate connector add --credentials-mode per_user --oauth ...` adds an
// instance a serving gateway runs as one of the config file: a caller
// without a connection is told where to connect, and the flow connects.
func TestConnectorAddPerUser(t *testing.T) {
	ctx := context.Background()
	provider := oauthtest.New("client-1", "secret-1", "xoxp-")
	slack := oauthtest.Serve(t, provider)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	state := t.TempDir()
	t.Setenv("ADD_CLIENT_SECRET", "secret-1")
	cfgPath := writeConfig(t, `auth: {resource: "`+base+`/mcp", tokens: true}`+"\n")
	flags := []string{"--config", cfgPath, "--state-dir", state}

	if out, err := runCLI(t, append([]string{"connector", "add", "--type", "slack", "--credentials-mode", "per_user"}, flags...)...); err == nil || !strings.Contains(err.Error(), "oauth: is required with credentials_mode per_user") {
		t.Fatalf("per_user without --oauth: %v\n%s", err, out)
	}
	if out, err := runCLI(t, append([]string{"connector", "add", "--type", "slack", "--oauth", "client_idd=x"}, flags...)...); err == nil || !strings.Contains(err.Error(), `--oauth: json: unknown field "client_idd"`) {
		t.Fatalf("an unknown --oauth key: %v\n%s", err, out)
	}
	out, err := runCLI(t, append([]string{"connector", "add", "--type", "slack", "--credentials-mode", "per_user",
		"--set", "api_url=" + slack + "/api/", "--set", "allow_private_networks=true",
		"--oauth", "client_id=client-1", "--oauth", "client_secret=env:ADD_CLIENT_SECRET", "--oauth", "scopes=channels:read,chat:write",
		"--oauth", "authorize_url=" + slack + "/oauth/authorize", "--oauth", "token_url=" + slack + "/oauth/token"}, flags...)...)
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if out, err := runCLI(t, append([]string{"connector", "show", "slack"}, flags...)...); err != nil || !strings.Contains(out, "CREDENTIALS MODE:  per_user") {
		t.Fatalf("show: %v\n%s", err, out)
	}

	// The serving gateway, on the same store.
	gw, st := serveCLIStore(t, cfgPath, state, ln)

	alice, err := auth.CreateToken(ctx, st.Tokens(), auth.Principal{Name: "alice", Role: auth.RoleUser, Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: oauthtest.WithBearer(alice, http.DefaultTransport)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slack__list_channels", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	if !res.IsError || !strings.Contains(string(raw), `"code":"NOT_CONNECTED"`) || !strings.Contains(string(raw), `"connect_url":"`+base+`/connect/slack"`) {
		t.Fatalf("an unconnected caller got %s", raw)
	}
	if _, err := oauthtest.Connect(base+"/connect/slack", alice, "alice-slack"); err != nil {
		t.Fatal(err)
	}
	if !server.ConnectionsOf(gw).Connected(ctx, "acme", "alice", "slack") {
		t.Fatal("alice is not connected after the flow")
	}
}
