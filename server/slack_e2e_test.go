package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/slack"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// fakeSlack is the least of Slack a post needs: one channel, the token's
// account, posts kept with their metadata, and a first post whose answer
// is lost.
type fakeSlack struct {
	mu    sync.Mutex
	posts []map[string]string // ts, text, metadata
}

func (f *fakeSlack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	w.Header().Set("Content-Type", "application/json")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/api/auth.test": // who the token is: a retry finds its post by it
		w.Write([]byte(`{"ok":true,"user_id":"U1","bot_id":"B1"}`))
	case "/api/conversations.list":
		w.Write([]byte(`{"ok":true,"channels":[{"id":"C1","name":"ops"}],"response_metadata":{"next_cursor":""}}`))
	case "/api/chat.postMessage":
		ts := "1900000000.00000" + string(rune('1'+len(f.posts)))
		f.posts = append(f.posts, map[string]string{"ts": ts, "text": r.FormValue("text"), "metadata": r.FormValue("metadata")})
		if len(f.posts) == 1 { // posted, but the answer is lost
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": "C1", "ts": ts})
	case "/api/conversations.history":
		var msgs []map[string]any
		for _, p := range f.posts {
			m := map[string]any{"ts": p["ts"], "text": p["text"], "bot_id": "B1"}
			if r.FormValue("include_all_metadata") == "1" && p["metadata"] != "" {
				m["metadata"] = json.RawMessage(p["metadata"])
			}
			msgs = append(msgs, m)
		}
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "messages": msgs})
	default:
		w.Write([]byte(`{"ok":false,"error":"unknown_method"}`))
	}
}

// Through the whole call path: a post held for approval runs once when
// approved, with the approval id as its idempotency key in the store's
// operation record, even though Slack's answer to it was lost; calling
// again returns it; and a channel ref made for one tenant is nothing to
// another.
func TestSlackPostApprovedRunsOnce(t *testing.T) {
	ctx := context.Background()
	slack := &fakeSlack{}
	srv := httptest.NewServer(slack)
	defer srv.Close()
	t.Setenv("E2E_SLACK_TOKEN", "xoxb-e2e")
	cfg, err := config.Parse([]byte(`
approvals: {wait: 300ms}
connectors:
  - type: slack
    config: {api_url: "`+srv.URL+`/api/", allow_private_networks: true, retry_backoff: 1ms}
    credentials:
      bot_token: {env: E2E_SLACK_TOKEN}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := memStore(t)
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(ctx)
	alice := server.CallOptions{Caller: connectors.Caller{Principal: "alice", Tenant: "acme"}}

	res, err := gw.Call(ctx, "slack.list_channels", json.RawMessage(`{}`), alice)
	if err != nil || res.IsError {
		t.Fatalf("list_channels: %v %v", err, structured(t, res))
	}
	items, _ := structured(t, res)["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("items %v", items)
	}
	ref := items[0].(map[string]any)["ref"].(string)
	args := json.RawMessage(`{"channel":"` + ref + `","text":"deploy done"}`)

	res, err = gw.Call(ctx, "slack.post_message", args, alice)
	if err != nil {
		t.Fatal(err)
	}
	code, id := errorCode(t, res)
	if code != "APPROVAL_PENDING" {
		t.Fatalf("post: %v", structured(t, res))
	}
	if _, err := gw.Decide(ctx, id, true, "bob", "ok"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the approved post to run", func() bool {
		res, _ := gw.Call(ctx, "legate.approval_status", json.RawMessage(`{"approval_id":"`+id+`"}`), alice)
		return structured(t, res)["state"] == "executed"
	})
	if op, err := st.Operations().Begin(ctx, "slack", id, time.Now(), time.Minute); err != nil || op.State != store.OpDone || op.Attempts != 1 {
		t.Fatalf("the operation record of the approval: %+v, %v", op, err)
	}
	res, err = gw.Call(ctx, "slack.post_message", args, alice)
	if err != nil || res.IsError {
		t.Fatalf("calling again: %v %v", err, structured(t, res))
	}
	if got := structured(t, res); got["text"] != "deploy done" || !strings.HasPrefix(got["ref"].(string), "message://") {
		t.Fatalf("outcome %v", got)
	}
	slack.mu.Lock()
	posts := len(slack.posts)
	slack.mu.Unlock()
	if posts != 1 {
		t.Fatalf("Slack got %d posts; want exactly 1", posts)
	}

	// Another tenant holding the ref gets nothing from it.
	other := server.CallOptions{Caller: connectors.Caller{Principal: "eve", Tenant: "globex"}}
	res, _ = gw.Call(ctx, "slack.read_history", json.RawMessage(`{"channel":"`+ref+`"}`), other)
	if code, _ := errorCode(t, res); code != "NOT_FOUND" {
		t.Fatalf("another tenant's ref: %v", structured(t, res))
	}
}
