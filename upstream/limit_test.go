package upstream_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// huge is a hand-written Streamable HTTP upstream whose tool "big" answers
// with a result of size bytes, written in chunks, as JSON or as an event
// stream, its id before or after the result; "small" answers a short text.
// It counts what it managed to write.
type huge struct {
	size        int
	sse         bool
	resultFirst bool // as the TypeScript SDK orders an answer's members
	written     atomic.Int64
	cut         atomic.Bool // a write failed: the reader closed the connection
}

func (h *huge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&msg)
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	answer := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	switch {
	case msg.Method == "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"huge","version":"1"}}`)
	case msg.Method == "tools/list":
		answer(`{"tools":[{"name":"big","inputSchema":{"type":"object"}},{"name":"small","inputSchema":{"type":"object"}}]}`)
	case msg.Method == "tools/call" && msg.Params.Name == "small":
		answer(`{"content":[{"type":"text","text":"small"}]}`)
	case msg.Method == "tools/call":
		h.writeBig(w, msg.ID)
	default:
		answer(`{}`)
	}
}

func (h *huge) writeBig(w http.ResponseWriter, id json.RawMessage) {
	head, tail := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id), `"}]}}`
	if h.resultFirst {
		head, tail = `{"result":{"content":[{"type":"text","text":"`, fmt.Sprintf(`"}]},"jsonrpc":"2.0","id":%s}`, id)
	}
	if h.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		head = "event: message\ndata: " + head
		tail += "\n\n"
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	write := func(s string) bool {
		n, err := io.WriteString(w, s)
		h.written.Add(int64(n))
		if err != nil {
			h.cut.Store(true)
			return false
		}
		return true
	}
	chunk := strings.Repeat("x", 64<<10)
	if !write(head) {
		return
	}
	for sent := 0; sent < h.size; sent += len(chunk) {
		if !write(chunk) {
			return
		}
		w.(http.Flusher).Flush()
	}
	write(tail)
}

// Defect 12 of issue 10: a 30 MB result was read whole and relayed. Over
// max_result_bytes it is cut off as it arrives — the upstream sees its
// connection closed long before it sent everything — and the call fails
// with a tool error naming the limit and the key; the next call works.
func TestOversizeResultIsCutOff(t *testing.T) { bothPaths(t, oversizeResultIsCutOff) }

func oversizeResultIsCutOff(t *testing.T) {
	const size = 30 << 20
	cases := map[string]struct{ sse, resultFirst bool }{
		"JSON":                     {},
		"JSON, result before id":   {resultFirst: true},
		"events":                   {sse: true},
		"events, result before id": {sse: true, resultFirst: true},
	}
	for name, shape := range cases {
		t.Run(name, func(t *testing.T) {
			h := &huge{size: size, sse: shape.sse, resultFirst: shape.resultFirst}
			up := upstreamtest.NewServer(t, h)
			m := newManager(t, memStore(t), upstream.Options{},
				upstream.Config{ID: "huge", URL: up.URL(), MaxResultBytes: 1 << 20, Timeout: dur(20 * time.Second)})
			m.Start(upstreamtest.Context(t))
			big := waitTool(t, m, "huge", "big", 10*time.Second)

			res, err := call(m, big, "")
			if upstreamCode(err) != legate.CodeAdapterMapping || !strings.Contains(err.Error(), "max_result_bytes") || !strings.Contains(err.Error(), "1048576") {
				t.Fatalf("got %v, %v; want ADAPTER_MAPPING_ERROR naming max_result_bytes and 1048576", res, err)
			}
			upstreamtest.Eventually(t, 10*time.Second, h.cut.Load, "the upstream's connection was never closed (%d bytes written)", h.written.Load())
			t.Logf("the upstream wrote %d bytes", h.written.Load())
			if n := h.written.Load(); n > size/2 {
				t.Fatalf("the upstream wrote %d of %d bytes before the cut", n, size)
			}
			if res, err := call(m, tool(m, "huge", "small"), ""); err != nil || res.IsError {
				t.Fatalf("the next call: %v, %+v", err, res)
			}
			if s := status(t, m, "huge"); s.Circuit != "closed" {
				t.Fatalf("circuit %s", s.Circuit)
			}
		})
	}
}

// A stdio upstream's oversize line is read through, never held whole, and
// the call fails the same way; the process and its session go on. The
// limit here is the manager's default, for an upstream that sets none.
func TestOversizeStdioResult(t *testing.T) {
	fx := upstreamtest.NewStdio(t)
	m := newManager(t, memStore(t), upstream.Options{MaxResultBytes: 1 << 20}, stdioConfig("big", fx))
	m.Start(upstreamtest.Context(t))
	echo := waitTool(t, m, "big", "echo", 10*time.Second)

	res, err := call(m, echo, strings.Repeat("y", 3<<20))
	if upstreamCode(err) != legate.CodeAdapterMapping || !strings.Contains(err.Error(), "max_result_bytes") {
		t.Fatalf("got %v, %v; want ADAPTER_MAPPING_ERROR naming max_result_bytes", res, err)
	}
	if res, err := call(m, echo, "after"); err != nil || res.IsError {
		t.Fatalf("the next call: %v, %+v", err, res)
	}
}

// Over the legacy SSE transport, whose one event stream carries every
// answer, an oversize answer fails its call the same way, and the upstream
// is reached again for the next.
func TestOversizeLegacySSEResult(t *testing.T) {
	srv := upstreamtest.NewEchoServer("legacy")
	up := upstreamtest.NewServer(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	m := newManager(t, memStore(t), upstream.Options{}, upstream.Config{ID: "l", URL: up.URL(), Transport: "sse", MaxResultBytes: 1 << 20})
	m.Start(upstreamtest.Context(t))
	echo := waitTool(t, m, "l", "echo", 10*time.Second)

	res, err := call(m, echo, strings.Repeat("s", 3<<20))
	if upstreamCode(err) != legate.CodeAdapterMapping || !strings.Contains(err.Error(), "max_result_bytes") {
		t.Fatalf("got %v, %v; want ADAPTER_MAPPING_ERROR naming max_result_bytes", res, err)
	}
	upstreamtest.Eventually(t, 10*time.Second, func() bool {
		res, err := call(m, echo, "after")
		return err == nil && !res.IsError
	}, "the upstream is never reached again")
}
