package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// eraUpstream is a 2025-era-style upstream (the SDK server answers every
// era) with a tool, a prompt, a resource and a resource template.
func eraUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "era", Version: "1"}, nil)
	upstreamtest.AddEcho(s, "echo")
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://doc", Text: "body"}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, mcp.ResourceNotFoundError("")
	})
	return upstreamtest.NewHTTPServer(t, s).URL()
}

// Every result a 2026-07-28 client gets says whether it is complete, on
// each path (native tools and per-client upstreams through the SDK, shared
// upstreams relayed as bytes, prompts and resources proxied); a client of
// an older protocol gets the results as before. Every list says how it may
// be cached, with a value the protocol allows.
func TestResultsCarryTheirTypeForNewClients(t *testing.T) {
	url := eraUpstream(t)
	gw := upGateway(t, `upstreams:
  - {id: up, url: `+url+`}
  - {id: pc, url: `+url+`, session: per_client}
`, memStore(t), nil)
	waitCatalog(t, gw, "mcp.up.echo", "mcp.pc.echo")
	endpoint := serve(t, gw)
	sid := fastSession(t, endpoint).ID()

	type request struct {
		method, name string
		params       string
	}
	calls := map[string]request{
		"native tool":         {"tools/call", "http__request", `{"name":"http__request","arguments":{"url":"http://127.0.0.1:1/"}}`},
		"relayed tool":        {"tools/call", wire("mcp.up.echo"), `{"name":"` + wire("mcp.up.echo") + `","arguments":{"text":"x"}}`},
		"per-client tool":     {"tools/call", wire("mcp.pc.echo"), `{"name":"` + wire("mcp.pc.echo") + `","arguments":{"text":"x"}}`},
		"unknown tool result": {"tools/call", wire("mcp.up.echo"), `{"name":"` + wire("mcp.up.echo") + `","arguments":{"nope":1}}`},
		"prompt":              {"prompts/get", wire("mcp.up.greet"), `{"name":"` + wire("mcp.up.greet") + `"}`},
		"resource":            {"resources/read", "test://doc", `{"uri":"test://doc"}`},
	}
	lists := map[string]string{"prompts": "prompts/list", "resources": "resources/list", "templates": "resources/templates/list", "tools": "tools/list"}

	result := func(t *testing.T, stateless bool, method, name, params string) map[string]json.RawMessage {
		t.Helper()
		var p map[string]any
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			t.Fatal(err)
		}
		on := sid
		if stateless {
			on = ""
		}
		x := exchangeOn(t, endpoint, on, "1", method, name, p)
		if len(x.msgs) != 1 {
			t.Fatalf("%s: %d messages: %v", method, len(x.msgs), x.msgs)
		}
		var msg struct {
			Result map[string]json.RawMessage `json:"result"`
			Error  json.RawMessage            `json:"error"`
		}
		if err := json.Unmarshal([]byte(x.msgs[0]), &msg); err != nil || msg.Result == nil {
			t.Fatalf("%s: %s (%v)", method, x.msgs[0], err)
		}
		return msg.Result
	}
	for _, stateless := range []bool{true, false} {
		era := map[bool]string{true: "2026-07-28 ", false: "2025-11-25 "}[stateless]
		for name, c := range calls {
			t.Run(era+name, func(t *testing.T) {
				res := result(t, stateless, c.method, c.name, c.params)
				got, ok := res["resultType"]
				if stateless && string(got) != `"complete"` || !stateless && ok {
					t.Errorf("resultType = %s (present %v); result %v", got, ok, res)
				}
				if c.method == "resources/read" && string(res["cacheScope"]) != `"private"` {
					t.Errorf("cacheScope = %s", res["cacheScope"])
				}
			})
		}
		for name, method := range lists {
			t.Run(era+name+" list", func(t *testing.T) {
				res := result(t, stateless, method, "", `{}`)
				if string(res["cacheScope"]) != `"private"` || string(res["ttlMs"]) != "0" {
					t.Errorf("cacheScope %s, ttlMs %s", res["cacheScope"], res["ttlMs"])
				}
			})
		}
	}
}
