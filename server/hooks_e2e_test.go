package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server/servertest"
)

// A GitHub instance receiving webhooks: a client of its tenant that
// subscribed to its events resource is told of each delivery, reads the
// resource, and pages through github.events_list; a client of another
// tenant sees neither.
func TestWebhookEventsReachSubscribedClients(t *testing.T) {
	const secret = "hooks-e2e-secret"
	t.Setenv("HOOKS_E2E_GH_PAT", "ghp_unused")
	t.Setenv("HOOKS_E2E_GH_SECRET", secret)
	g := servertest.Start(t, `
auth: {tokens: true}
connectors:
  - id: gh
    type: github
    tenant: acme
    config: {base_url: "http://127.0.0.1:9/", allow_private_networks: true}
    credentials: {token: {env: HOOKS_E2E_GH_PAT}, webhook_secret: {env: HOOKS_E2E_GH_SECRET}}
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	updated := make(chan string, 16)
	connect := func(p auth.Principal) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
		})
		hc := &http.Client{Transport: bearer{g.Token(t, p), http.DefaultTransport}}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.URL + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice := connect(auth.Principal{Name: "alice", Tenant: "acme", Role: auth.RoleUser})
	bob := connect(auth.Principal{Name: "bob", Tenant: "globex", Role: auth.RoleUser})
	const uri = "legate://events/gh"

	// Only the instance's tenant sees its events.
	lists := func(cs *mcp.ClientSession) bool {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == uri })
	}
	if !lists(alice) || lists(bob) {
		t.Fatalf("resources/list: alice sees %s: %v, bob: %v", uri, lists(alice), lists(bob))
	}
	if err := bob.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err == nil {
		t.Fatal("bob, of another tenant, subscribed to gh's events")
	}
	if _, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatal("bob, of another tenant, read gh's events")
	}
	if res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "gh.events_list"}); err == nil && !res.IsError {
		t.Fatal("bob, of another tenant, called gh.events_list")
	}
	if err := alice.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}

	deliver := func(id, event, body string) int {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(body))
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/hooks/gh", strings.NewReader(body))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://github.com") // a provider is no browser of this origin: the route is outside the guard
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := 1; i <= 3; i++ {
		body := fmt.Sprintf(`{"action":"opened","issue":{"html_url":"https://github.com/o/r/issues/%d"},"repository":{"full_name":"o/r"},"sender":{"login":"octocat"}}`, i)
		if code := deliver(fmt.Sprint("d-", i), "issues", body); code != http.StatusOK {
			t.Fatalf("delivery %d: %d", i, code)
		}
		select {
		case got := <-updated:
			if got != uri {
				t.Fatalf("told of %s", got)
			}
		case <-ctx.Done():
			t.Fatalf("no notifications/resources/updated after delivery %d", i)
		}
	}
	if code := deliver("d-1", "issues", `{"action":"opened"}`); code != http.StatusOK {
		t.Fatalf("a redelivery: %d", code)
	}
	if code := deliver("d-4", "issues", `{"action":"closed"}`); code != http.StatusOK {
		t.Fatalf("a delivery: %d", code)
	}

	// The resource holds the latest events, newest first.
	res, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Events []struct {
			Schema, Kind, Object, Actor string
		} `json:"events"`
	}
	if len(res.Contents) != 1 || json.Unmarshal([]byte(res.Contents[0].Text), &doc) != nil {
		t.Fatalf("read %+v", res.Contents)
	}
	if len(doc.Events) != 4 || doc.Events[0].Kind != "issues.closed" || doc.Events[3].Schema != "event.v1" || doc.Events[3].Kind != "issues.opened" || doc.Events[3].Actor != "octocat" ||
		doc.Events[3].Object != "https://github.com/o/r/issues/1" {
		t.Fatalf("the resource holds %+v", doc.Events)
	}

	// The tool pages with a signed cursor, and filters by kind.
	type page struct {
		Items []struct {
			Kind            string
			ProviderEventID string `json:"provider_event_id"`
		} `json:"items"`
		NextCursor string `json:"next_cursor"`
	}
	call := func(args map[string]any) page {
		r, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "gh.events_list", Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("events_list %v: %v %+v", args, err, r)
		}
		var p page
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := call(map[string]any{"limit": 2, "kind": "issues.opened"})
	if len(first.Items) != 2 || first.Items[0].ProviderEventID != "d-3" || first.NextCursor == "" {
		t.Fatalf("first page %+v", first)
	}
	second := call(map[string]any{"limit": 2, "kind": "issues.opened", "cursor": first.NextCursor})
	if len(second.Items) != 1 || second.Items[0].ProviderEventID != "d-1" || second.NextCursor != "" {
		t.Fatalf("second page %+v", second)
	}
	if r, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "gh.events_list", Arguments: map[string]any{"cursor": first.NextCursor + "x"}}); err == nil && !r.IsError {
		t.Fatal("an altered cursor was accepted")
	}
}
