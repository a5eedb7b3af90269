package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// asker is a hand-written Streamable HTTP upstream whose one tool, "ask",
// sends the client a request mid-call (roots/list, which a shared session
// does not offer) and a log message, and answers only once the client has
// replied to that request.
type asker struct {
	replies chan json.RawMessage // the client's replies to the upstream's requests
}

func (a *asker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &msg)
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "asker-1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch {
	case msg.Method == "" && msg.ID != nil: // the client's reply
		a.replies <- json.RawMessage(body)
		w.WriteHeader(http.StatusAccepted)
	case msg.ID == nil: // a notification
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"asker","version":"1"}}`)
	case msg.Method == "tools/list":
		reply(`{"tools":[{"name":"ask","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`)
	case msg.Method == "tools/call":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"roots/list\"}\n\n")
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"asked\"}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-a.replies:
		case <-time.After(5 * time.Second):
		}
		// The answer, its data split over two lines as event streams allow.
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\n", msg.ID)
		fmt.Fprint(w, "data: \"result\":{\"content\":[{\"type\":\"text\",\"text\":\"answered\"}]}}\n\n")
	default:
		reply(`{}`)
	}
}

// What an upstream sends on a relayed call's stream before the answer is
// handled as the SDK client would: a request the shared session does not
// offer is refused with "method not found", a log message is taken, and the
// answer still arrives.
func TestRelayAnswersTheUpstreamsRequests(t *testing.T) {
	noLeaks(t)
	a := &asker{replies: make(chan json.RawMessage, 1)}
	seen := make(chan json.RawMessage, 1)
	tap := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"id":99`) {
				seen <- body
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		a.ServeHTTP(w, r)
	})
	srv := upstreamtest.NewServer(t, tap)
	m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "a", URL: srv.URL()})
	if _, err := m.Refresh(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rel, _, err := m.Relay(ctx, tool(m, "a", "ask"), nil, upstream.Client{})
	if err != nil || string(rel.JSON) != `{"content":[{"type":"text","text":"answered"}]}` || rel.IsError || rel.Size != len("answered") {
		t.Fatalf("relayed: %s %v", rel.JSON, err)
	}
	var reply struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(<-seen, &reply); err != nil || reply.ID != 99 || reply.Error.Code != -32601 {
		t.Fatalf("the reply to roots/list: %+v %v", reply, err)
	}
}

// A legacy SSE upstream (one event stream for every message, opened by the
// connect call) serves calls after connecting, with its progress relayed,
// and leaves nothing running once closed.
func TestLegacySSEUpstream(t *testing.T) {
	noLeaks(t)
	srv := upstreamtest.NewEchoServer("legacy")
	upstreamtest.AddSlow(srv, "slow", 200*time.Millisecond, 50*time.Millisecond)
	upstreamtest.CloseSessionsAtCleanup(t, srv)
	up := upstreamtest.NewServer(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "l", URL: up.URL(), Transport: "sse"})
	if _, err := m.Refresh(context.Background(), "l"); err != nil {
		t.Fatal(err)
	}
	if res, err := call(m, tool(m, "l", "echo"), "hi"); err != nil || upstreamtest.Text(res) != "hi" {
		t.Fatalf("echo: %v %v", res, err)
	}
	var progress atomic.Int64
	client := upstream.Client{ProgressToken: "p", Progress: func(*mcp.ProgressNotificationParams) { progress.Add(1) }}
	if res, err := callAs(m, tool(m, "l", "slow"), "", client); err != nil || upstreamtest.Text(res) != "done" || progress.Load() < 3 {
		t.Fatalf("slow: %v %v, %d progress notifications", res, err, progress.Load())
	}
}

// lingerer is a Streamable HTTP upstream whose tool answers at once and
// then keeps the call's event stream open until the client goes, as a
// server may that sends its stream's end late.
type lingerer struct{ lingering chan struct{} }

func (l *lingerer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &msg)
	w.Header().Set("Mcp-Session-Id", "lingerer-1")
	switch msg.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"lingerer","version":"1"}}}`, msg.ID)
	case "tools/list":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"linger","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`, msg.ID)
	case "tools/call":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", msg.ID)
		w.(http.Flusher).Flush()
		l.lingering <- struct{}{}
		<-r.Context().Done()
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// The rest of a relayed call's stream is read in the background, and
// Close ends that read and waits for it: nothing of the manager's outlives
// Close, however long the upstream keeps the stream open.
func TestRelayDrainEndsAtClose(t *testing.T) {
	l := &lingerer{lingering: make(chan struct{}, 1)}
	srv := upstreamtest.NewServer(t, l)
	st := memStore(t)
	opt := goleak.IgnoreCurrent() // the upstream's server and the store
	m := newManager(t, st, upstream.Options{}, upstream.Config{ID: "a", URL: srv.URL()})
	if _, err := m.Refresh(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rel, _, err := m.Relay(ctx, tool(m, "a", "linger"), nil, upstream.Client{})
	if err != nil || string(rel.JSON) != `{"content":[{"type":"text","text":"done"}]}` {
		t.Fatalf("relayed: %s %v", rel.JSON, err)
	}
	<-l.lingering
	m.Close()
	// What remains is the upstream's side of the stream, its server's.
	goleak.VerifyNone(t, opt, goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreTopFunction("net/http.(*connReader).backgroundRead"))
}
