package server_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
)

// A client's notifications/cancelled travels on a request of its own, and
// can reach the gateway before the call it cancels: the call is cancelled
// as it starts, rather than running on (here, a write whose provider
// waits for its caller to give up, until the kit's 20 s attempt timeout).
func TestCancellationBeforeItsCallCancelsIt(t *testing.T) {
	gw := newGateway(t, onceConfig)
	url := serve(t, gw)
	sid := fastSession(t, url).ID()
	post := func(body string) *http.Response {
		req, _ := http.NewRequestWithContext(context.Background(), "POST", url, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"early-1","reason":"gave up"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the cancellation: %s", resp.Status)
	}
	resp = post(`{"jsonrpc":"2.0","id":"early-1","method":"tools/call","params":{"name":"once__post","arguments":{"text":"hang early"}}}`)
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	// Run on, it would have ended at its timeout with a TIMEOUT result.
	if bytes.Contains(b.Bytes(), []byte(`"result"`)) {
		t.Fatalf("a cancelled call was answered: %s", b.String())
	}
}
