package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNewEraClientOldEraUpstream: a client of protocol 2026-07-28 (the go-sdk client at its
// default, stateless) uses a 2025-era upstream over stdio (server-everything) through Legate:
// tools, progress, prompts and resources, and an elicitation the upstream sends in the middle
// of a call, which the client receives as an input_required result and answers by retrying.
// Every result it accepts carries what that protocol requires (the go-sdk client decodes
// resultType and the list fields).
func TestNewEraClientOldEraUpstream(t *testing.T) {
	p := need(t)
	t.Parallel()
	config := upstreamConfig(t, fmt.Sprintf("upstreams:\n  - id: everything\n    command: %s\n", yamlList(p.node, p.everything, "stdio")))
	state := t.TempDir()
	refreshUpstreams(t, config, state, "everything")
	s := serveState(t, config, state)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var progress, asked atomic.Int32
	who := "era-" + nonce()
	client := mcp.NewClient(&mcp.Implementation{Name: "era-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if !strings.Contains(r.Params.Message, "Please provide inputs") {
				t.Errorf("elicitation %q, want the upstream's", r.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": who, "check": true}}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28 (the client's default)", v)
	}

	t.Run("tools", func(t *testing.T) {
		msg := "era-" + nonce()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__everything__echo", Arguments: map[string]any{"message": msg}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("echo: %+v, %v", res, err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, msg) {
			t.Fatalf("echo: %q, want %q in it", text, msg)
		}
		long := &mcp.CallToolParams{Name: "mcp__everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 3}}
		long.SetProgressToken("era-progress")
		if res, err := cs.CallTool(ctx, long); err != nil || res.IsError {
			t.Fatalf("long-running operation: %+v, %v", res, err)
		}
		// The client runs its notification handler apart from the call's
		// answer: give the last one a moment to be counted.
		for deadline := time.Now().Add(5 * time.Second); progress.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if n := progress.Load(); n < 3 {
			t.Errorf("%d progress notifications, want 3 (the upstream sends one a step)", n)
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		// The go-sdk client answers input_required itself: it asks its
		// handler and calls again with the answer and the request state.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__everything__trigger-elicitation-request", Arguments: map[string]any{}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("trigger-elicitation-request: %+v, %v", res, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if !strings.Contains(text.String(), "- Name: "+who) || asked.Load() != 1 {
			t.Errorf("asked %d times (want 1); the upstream's result %q does not hold the answer %q", asked.Load(), text.String(), who)
		}

		// Without the client's help: the raw input_required result, and its
		// request state, which the retry must bring back intact.
		raw := mcp.NewClient(&mcp.Implementation{Name: "era-raw", Version: "1"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
		rcs, err := raw.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rcs.Close()
		first, err := rcs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__everything__trigger-elicitation-request", Arguments: map[string]any{}})
		if err != nil || !first.NeedsInput() || len(first.InputRequests) != 1 || first.RequestState == "" {
			t.Fatalf("first round: %+v, %v; want input_required with one input request and a state", first, err)
		}
		answers := mcp.InputResponseMap{}
		for key := range first.InputRequests {
			answers[key] = &mcp.ElicitResult{Action: "decline"}
		}
		if _, err := rcs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__everything__trigger-elicitation-request", Arguments: map[string]any{}, InputResponses: answers, RequestState: first.RequestState + "x"}); err == nil {
			t.Error("a retry with an altered request state was taken")
		}
		done, err := rcs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__everything__trigger-elicitation-request", Arguments: map[string]any{}, InputResponses: answers, RequestState: first.RequestState})
		if err != nil || done.NeedsInput() || done.IsError || len(done.Content) == 0 || !strings.Contains(done.Content[0].(*mcp.TextContent).Text, "declined") {
			t.Fatalf("retry: %+v, %v; want the upstream's answer to a declined elicitation", done, err)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		list, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(list.Prompts) == 0 {
			t.Fatalf("prompts/list: %+v, %v", list, err)
		}
		var name string
		for _, pr := range list.Prompts {
			if !hasRequired(pr.Arguments) {
				name = pr.Name
				break
			}
		}
		if name == "" {
			t.Fatalf("no prompt without required arguments among %d", len(list.Prompts))
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		if err != nil || len(got.Messages) == 0 {
			t.Fatalf("prompts/get %s: %+v, %v", name, got, err)
		}
	})

	t.Run("resources", func(t *testing.T) {
		list, err := cs.ListResources(ctx, nil)
		if err != nil || len(list.Resources) == 0 {
			t.Fatalf("resources/list: %+v, %v", list, err)
		}
		uri := list.Resources[0].URI
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(got.Contents) == 0 {
			t.Fatalf("resources/read %s: %+v, %v", uri, got, err)
		}
		if got.CacheScope != "private" {
			t.Errorf("resources/read %s: cacheScope %q, want private", uri, got.CacheScope)
		}
		if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
			t.Errorf("resources/templates/list: %v", err)
		}
	})
}

func hasRequired(args []*mcp.PromptArgument) bool {
	for _, a := range args {
		if a.Required {
			return true
		}
	}
	return false
}
