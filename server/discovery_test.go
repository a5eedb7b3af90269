package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server"
)

// discoveryConfig has the local principal (no authentication) in a
// search-mode profile.
const discoveryConfig = `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
profile: agent
profiles:
  - {name: agent, discovery: search}
  - {name: lister, exclude: ["*.boom"]}
connectors:
  - id: e
    type: echo-test
    description: The echo service
    credentials:
      key: {env: LEGATE_TEST_KEY}
`

// found is what legate.search_tools returned.
func found(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	if res.IsError {
		t.Fatalf("search failed: %v", res.Content[0].(*mcp.TextContent).Text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Tools []struct {
			Name        string          `json:"name"`
			Class       string          `json:"class"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range out.Tools {
		if tool.Description == "" || len(tool.InputSchema) == 0 || tool.Class == "" {
			t.Errorf("%s is returned without its whole declaration: %s", tool.Name, b)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestSearchModeSessionGrowsItsList(t *testing.T) {
	gw := newGateway(t, discoveryConfig)
	url := serve(t, gw)
	changed := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, want := names(t, cs), []string{"legate__approval_status", "legate__search_tools"}; !slices.Equal(got, want) {
		t.Fatalf("a search-mode session starts with %v, want %v", got, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "legate__search_tools", Arguments: map[string]any{"query": "echo my text back", "limit": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := found(t, res); !slices.Equal(got, []string{"e__echo"}) {
		t.Fatalf("search found %v, want [e__echo]", got)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed after a search found a tool")
	}
	if got := names(t, cs); !slices.Contains(got, "e__echo") || len(got) != 3 {
		t.Fatalf("after the search the list is %v", got)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "e__echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
		t.Fatalf("calling the found tool: %v %v", res, err)
	}
	// A tool of the view never listed can be called by name.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "e__fail", Arguments: map[string]any{"text": "CONFLICT"}}); err != nil || !res.IsError {
		t.Fatalf("calling a tool never listed: %v %v", res, err)
	}
	// The same search again adds nothing, and no second notification.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "legate__search_tools", Arguments: map[string]any{"query": "echo my text back", "limit": 1}}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, cs); len(got) != 3 {
		t.Fatalf("a repeated search changed the list: %v", got)
	}
	select {
	case <-changed:
		t.Fatal("a search that found nothing new notified list_changed")
	default:
	}
}

// The fast path answers a search-mode session's tools/list as the SDK does,
// before and after a search, and a stateless list holds the search tools.
func TestSearchModeFastListIsTheSDKs(t *testing.T) {
	gw := newGateway(t, discoveryConfig)
	url := serve(t, gw)
	cs := fastSession(t, url)
	compare := func(when string) {
		fast := exchangeOn(t, url, cs.ID(), "l", "tools/list", "", map[string]any{})
		sdk := exchangeOn(t, url, cs.ID(), "l", "tools/list", "", map[string]any{"cursor": "x"})
		if fmt.Sprint(fast) != fmt.Sprint(sdk) {
			t.Errorf("%s:\nfast %.600v\nSDK  %.600v", when, fast, sdk)
		}
		if !strings.Contains(fmt.Sprint(fast), "legate__search_tools") {
			t.Errorf("%s: the list lacks the search tool: %.600v", when, fast)
		}
	}
	compare("before a search")
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "legate__search_tools", Arguments: map[string]any{"query": "panic"}}); err != nil {
		t.Fatal(err)
	}
	compare("after a search")
	if fast := exchangeOn(t, url, cs.ID(), "l", "tools/list", "", map[string]any{}); !strings.Contains(fmt.Sprint(fast), "e__boom") {
		t.Errorf("the found tool is not listed: %.600v", fast)
	}
	stateless := fmt.Sprint(exchangeOn(t, url, "", "l", "tools/list", "", map[string]any{}))
	if !strings.Contains(stateless, "legate__search_tools") || strings.Contains(stateless, "e__echo") {
		t.Errorf("a stateless list: %.600v", stateless)
	}
}

// legate.search_tools searches the caller's view only, and filters by
// connector and class.
func TestSearchToolSearchesTheCallersView(t *testing.T) {
	gw := newGateway(t, discoveryConfig)
	ctx := context.Background()
	search := func(p *auth.Principal, args string) []string {
		t.Helper()
		res, err := gw.Call(ctx, "legate.search_tools", json.RawMessage(args), server.CallOptions{Principal: p})
		if err != nil {
			t.Fatal(err)
		}
		return found(t, res)
	}
	lister := &auth.Principal{Name: "l", Profile: "lister"}
	if got := search(lister, `{"query":"panic boom"}`); slices.Contains(got, "e__boom") {
		t.Errorf("a tool outside the view was found: %v", got)
	}
	if got := search(nil, `{"query":"panic boom"}`); len(got) == 0 || got[0] != "e__boom" {
		t.Errorf("the agent profile's search found %v", got)
	}
	if got := search(nil, `{"query":"echo fail panic", "class":"read", "connector":"e"}`); !slices.Equal(got, []string{"e__echo"}) {
		t.Errorf("class read found %v", got)
	}
	if got := search(nil, `{"query":"echo fail panic", "connector":"nope"}`); len(got) != 0 {
		t.Errorf("an unknown connector's tools: %v", got)
	}
	if got := search(nil, `{"query":"echo fail panic", "connector":"E", "limit":2}`); len(got) != 2 {
		t.Errorf("connector e, limit 2: %v", got)
	}
	res, _ := gw.Call(ctx, "legate.search_tools", json.RawMessage(`{"query":" "}`), server.CallOptions{})
	if !res.IsError {
		t.Error("an empty query did not fail")
	}
}

// The server's instructions give one line per connector, never its tools.
func TestInstructionsListConnectorsNotTools(t *testing.T) {
	gw := newGateway(t, discoveryConfig)
	cs := connect(t, serve(t, gw), "2025-11-25")
	got := cs.InitializeResult().Instructions
	if !strings.Contains(got, "\n- e: The echo service") || strings.Contains(got, "boom") {
		t.Fatalf("instructions: %q", got)
	}
}

// A session without an id (stdio, in memory) grows its own list too.
func TestSearchModeOnASessionWithoutID(t *testing.T) {
	gw := newGateway(t, discoveryConfig)
	ctx := context.Background()
	cs, err := server.SDKClient(ctx, gw)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := names(t, cs); len(got) != 2 {
		t.Fatalf("a search-mode session starts with %v", got)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "legate__search_tools", Arguments: map[string]any{"query": "panic"}}); err != nil {
		t.Fatal(err)
	}
	if got := names(t, cs); !slices.Contains(got, "e__boom") {
		t.Fatalf("after the search the list is %v", got)
	}
	other, err := server.SDKClient(ctx, gw)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got := names(t, other); len(got) != 2 {
		t.Fatalf("another session sees what the first found: %v", got)
	}
}
