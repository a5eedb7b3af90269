package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// unknownToolError calls name on cs and returns the JSON-RPC error it
// answers, failing t for anything else.
func unknownToolError(t *testing.T, cs *mcp.ClientSession, name string) *jsonrpc.Error {
	t.Helper()
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("calling %q: %v (%T), want a JSON-RPC invalid-params error", name, err, err)
	}
	return rpcErr
}

// A call to an unknown tool names the closest tools, the same on the fast
// path's session, stateless, and the SDK's own path.
func TestUnknownToolSuggestsTheClosest(t *testing.T) {
	gw := newGateway(t, testConfig)
	url := serve(t, gw)
	sdk, err := server.SDKClient(context.Background(), gw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdk.Close() })
	const want = `unknown tool "e__ech"; did you mean "e__echo"?`
	for name, cs := range map[string]*mcp.ClientSession{
		"session":   connect(t, url, "2025-11-25"),
		"stateless": connect(t, url, "2026-07-28"),
		"sdk":       sdk,
	} {
		e := unknownToolError(t, cs, "e__ech")
		if e.Message != want {
			t.Errorf("%s: %q, want %q", name, e.Message, want)
		}
		var data struct {
			Code       string   `json:"code"`
			Message    string   `json:"message"`
			DidYouMean []string `json:"did_you_mean"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || data.Code != "NOT_FOUND" || data.Message != want || strings.Join(data.DidYouMean, ",") != "e__echo" {
			t.Errorf("%s: data %s (%v)", name, e.Data, err)
		}
	}
	if e := unknownToolError(t, sdk, "weather__forecast"); e.Message != `unknown tool "weather__forecast"` {
		t.Errorf("nothing near: %q", e.Message)
	}
}

// The tools suggested are the caller's own: another tenant's tool is
// never named, though it is the closest.
func TestUnknownToolSuggestsOnlyVisibleTools(t *testing.T) {
	st := memStore(t)
	cfg, err := config.Parse([]byte(testConfig+"  - {id: acmeonly, type: echo-test, tenant: acme}\nauth: {tokens: true}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	url := serve(t, gw)
	as := func(p auth.Principal) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{token(t, st, p), http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	acme := as(auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleUser})
	globex := as(auth.Principal{Name: "gus", Tenant: "globex", Role: auth.RoleUser})
	if e := unknownToolError(t, acme, "acmeonly__ech"); !strings.HasSuffix(e.Message, `did you mean "acmeonly__echo"?`) {
		t.Errorf("acme: %q", e.Message)
	}
	if e := unknownToolError(t, globex, "acmeonly__ech"); strings.Contains(e.Message, `"acmeonly__echo"`) || strings.Contains(string(e.Data), "acmeonly__echo") {
		t.Errorf("globex is told of acme's tool: %q %s", e.Message, e.Data)
	}
}
