package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream that cannot be reached is not left in the store by a failed
// add; --no-refresh stores it without connecting.
func TestFailedUpstreamAddStoresNothing(t *testing.T) {
	state := t.TempDir()
	_, err := runCLI(t, "upstream", "add", "down", "--url", "http://127.0.0.1:1/mcp", "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), `upstream "down" not added`) {
		t.Fatalf("add of an unreachable upstream: %v", err)
	}
	if out, _ := runCLI(t, "upstream", "list", "--state-dir", state); strings.Contains(out, "down") {
		t.Fatalf("the failed upstream is listed:\n%s", out)
	}
	if out, err := runCLI(t, "upstream", "add", "down", "--url", "http://127.0.0.1:1/mcp", "--no-refresh", "--state-dir", state); err != nil || !strings.Contains(out, "not connected") {
		t.Fatalf("add --no-refresh: %v\n%s", err, out)
	}
	if out, _ := runCLI(t, "upstream", "list", "--state-dir", state); !strings.Contains(out, "down") {
		t.Fatalf("the upstream added with --no-refresh is not listed:\n%s", out)
	}
}

// An upstream added with --description is described to clients by it; one
// added without is named by its id and URL, not by the store it is kept in.
func TestUpstreamAddDescription(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "log_level: warn\n")
	for _, args := range [][]string{
		{"upstream", "add", "wiki", "--url", "http://127.0.0.1:1/mcp", "--description", "the team wiki, read only"},
		{"upstream", "add", "plain", "--url", "http://127.0.0.1:1/mcp"},
	} {
		if out, err := runCLI(t, append(args, "--no-refresh", "--config", cfg, "--state-dir", state)...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCLIStore(t, cfg, state, ln)
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got := cs.InitializeResult().Instructions
	for _, want := range []string{"- wiki: the team wiki, read only", `- plain: the MCP server "plain" (streamable-http: http://127.0.0.1:1/mcp)`} {
		if !strings.Contains(got, want) {
			t.Errorf("the instructions lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "the store") {
		t.Errorf("the instructions name the store:\n%s", got)
	}
}

// --token and --header store references, never values; a malformed one is
// refused before anything is stored.
func TestUpstreamAddCredentialReferences(t *testing.T) {
	state := t.TempDir()
	if _, err := runCLI(t, "upstream", "add", "crm", "--url", "http://127.0.0.1:1/mcp", "--token", "crm-token", "--no-refresh", "--state-dir", state); err == nil || !strings.Contains(err.Error(), `--token: credential reference "crm-token": want env:NAME, file:PATH or vault:NAME`) {
		t.Fatalf("a token given as a value: %v", err)
	}
	if out, err := runCLI(t, "upstream", "add", "crm", "--url", "http://127.0.0.1:1/mcp", "--token", "vault:crm-token",
		"--header", "X-Workspace-Key=env:CRM_KEY", "--no-refresh", "--state-dir", state); err != nil {
		t.Fatalf("add with references: %v\n%s", err, out)
	}
	out, err := runCLI(t, "upstream", "show", "crm", "--state-dir", state)
	if err != nil || !strings.Contains(out, "token=vault:crm-token,headers.X-Workspace-Key=env:CRM_KEY") {
		t.Fatalf("upstream show: %v\n%s", err, out)
	}
}
