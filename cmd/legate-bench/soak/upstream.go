package soak

// The soak's upstream (`legate-bench soakupstream`): the echo tool, whose
// text argument may ask for a fault, so that the load client knows which
// of its calls fail on purpose and how:
//
//	fault:error …   the tool answers with isError (the tool's own failure)
//	fault:hang …    no answer: the request stays open until Legate gives up
//	fault:drop …    the TCP connection is dropped mid-call, no HTTP response
//
// As upstream/upstreamtest.Faulty does for tests, but per call rather than
// per server, and in a process of its own.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// The faults a soak call may ask for, as the prefix of its text.
const (
	faultError = "fault:error"
	faultHang  = "fault:hang"
	faultDrop  = "fault:drop"
)

// injectedError is the text of an injected tool error.
const injectedError = "injected tool error"

// maxHang bounds a hanging call at the upstream, should Legate never give
// up on it (the soak then reports the call, not a stuck process).
const maxHang = 60 * time.Second

// UpstreamMain runs the soak's upstream: `legate-bench soakupstream`.
func UpstreamMain(args []string) error {
	fs := flag.NewFlagSet("soakupstream", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	fs.Parse(args)
	s := mcp.NewServer(&mcp.Implementation{Name: "soak-upstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged, or fails as the text asks (legate-bench soak).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, soakEcho)
	mux := http.NewServeMux()
	mux.Handle("/mcp", &faultHandler{inner: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)})
	// The connections open now, from Legate's pool: what Legate holds for
	// them (a file and two goroutines each) is the pool's, not a leak.
	var open atomic.Int64
	mux.HandleFunc("GET /_soak/conns", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, open.Load()-1) // not this request's
	})
	srv := &http.Server{Handler: mux, ConnState: func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}}
	return harness.ServeUntilSignal(srv, *addr)
}

func soakEcho(_ context.Context, _ *mcp.CallToolRequest, in harness.EchoIn) (*mcp.CallToolResult, any, error) {
	if strings.HasPrefix(in.Text, faultError) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: injectedError}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

// faultHandler hangs or drops the tools/call requests that ask for it and
// hands every other request to inner.
type faultHandler struct{ inner http.Handler }

func (h *faultHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch soakFault(body) {
	case faultHang:
		select {
		case <-r.Context().Done():
		case <-time.After(maxHang):
		}
		return
	case faultDrop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
			return
		}
	}
	h.inner.ServeHTTP(w, r)
}

// soakFault is the fault a tools/call body asks for, "" for none.
func soakFault(body []byte) string {
	if !bytes.Contains(body, []byte("fault:")) {
		return ""
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Arguments harness.EchoIn `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return ""
	}
	for _, f := range []string{faultHang, faultDrop} {
		if strings.HasPrefix(msg.Params.Arguments.Text, f) {
			return f
		}
	}
	return ""
}
