package e2e_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

// Two `legate serve` replicas on one PostgreSQL store: a GitHub delivery
// posted to one is stored once (its retry to the other is not stored
// again), and a client subscribed on the other replica is told of it,
// reads it and lists it.
func TestWebhooksAcrossReplicas(t *testing.T) {
	binary(t)
	dbURL := pgtest.URL(t)
	secret := "gh-hook-" + nonce()
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(`connectors:
  - id: gh
    type: github
    config: {base_url: "http://127.0.0.1:9/", allow_private_networks: true}
    credentials: {token: {env: GH_PAT}, webhook_secret: {env: GH_HOOK_SECRET}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GH_PAT=ghp_unused", "GH_HOOK_SECRET=" + secret, "LEGATE_STORE=" + dbURL,
		"LEGATE_MASTER_KEY=k1:" + strings.Repeat("A", 43) + "="}
	a, b := serve(t, config, env...), serve(t, config, env...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	updated := make(chan string, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.url("127.0.0.1")}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const uri = "legate://events/gh"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}

	body := `{"action":"opened","issue":{"html_url":"https://github.com/o/r/issues/1"},"repository":{"full_name":"o/r"},"sender":{"login":"octocat"}}`
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	deliver := func(s *server, sig, id string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+s.addr+"/hooks/gh", strings.NewReader(body))
		req.Header.Set("X-Hub-Signature-256", sig)
		req.Header.Set("X-GitHub-Event", "issues")
		req.Header.Set("X-GitHub-Delivery", id)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans struct{ Duplicate bool }
		_ = json.NewDecoder(resp.Body).Decode(&ans)
		return resp.StatusCode, map[bool]string{true: "duplicate", false: "stored"}[ans.Duplicate]
	}
	good := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if code, _ := deliver(a, "sha256="+strings.Repeat("0", 64), "e2e-forged"); code != http.StatusUnauthorized {
		t.Fatalf("a forged delivery: %d", code)
	}
	if code, what := deliver(a, good, "e2e-delivery-1"); code != http.StatusOK || what != "stored" {
		t.Fatalf("the delivery to replica a: %d %s", code, what)
	}
	next := func(what string) {
		select {
		case got := <-updated:
			if got != uri {
				t.Fatalf("told of %s", got)
			}
		case <-ctx.Done():
			t.Fatalf("the client on replica b was not told of %s", what)
		}
	}
	// The first notification may be replica b's watch starting after the
	// subscription (it tells every subscriber to re-read); once it came,
	// replica b listens, and the second event stored on replica a can
	// reach its client only through the database's notification.
	next("the first event replica a stored")
	if code, what := deliver(b, good, "e2e-delivery-1"); code != http.StatusOK || what != "duplicate" {
		t.Fatalf("the retry to replica b: %d %s", code, what)
	}
	if code, what := deliver(a, good, "e2e-delivery-2"); code != http.StatusOK || what != "stored" {
		t.Fatalf("the second delivery to replica a: %d %s", code, what)
	}
	next("the second event replica a stored")

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh.events_list", Arguments: map[string]any{"include_payload": true}})
	if err != nil || res.IsError {
		t.Fatalf("gh.events_list: %v %+v", err, res)
	}
	var page struct {
		Items []struct {
			Kind, Actor     string
			ProviderEventID string          `json:"provider_event_id"`
			Payload         json.RawMessage `json:"payload"`
		} `json:"items"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &page); err != nil || len(page.Items) != 2 || page.Items[1].Kind != "issues.opened" ||
		page.Items[1].ProviderEventID != "e2e-delivery-1" || page.Items[0].ProviderEventID != "e2e-delivery-2" || page.Items[1].Actor != "octocat" || !strings.Contains(string(page.Items[1].Payload), "issues/1") {
		t.Fatalf("gh.events_list on replica b: %s", raw)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, "e2e-delivery-1") {
		t.Fatalf("reading %s: %v %+v", uri, err, read)
	}
}
