package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

// What TestClientMatrix reads off the wire: a recording proxy in front of "legate serve", and
// tee around "legate stdio".

// wireRecorder is a reverse proxy in front of Legate's /mcp that records, per cell (the path
// /c/CELL/mcp), each tools/call it forwards: its Mcp-Protocol-Version header and the answer's
// bytes as Legate sent them.
type wireRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string][]*wireCall // by cell
}

type wireCall struct {
	protocol string
	session  bool // it carried an Mcp-Session-Id
	answer   syncbuf.Buffer
}

func newWireRecorder(t *testing.T, target string) *wireRecorder {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	w := &wireRecorder{seen: map[string][]*wireCall{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(to)
			r.Out.URL.Path = to.Path
			r.Out.URL.RawPath = ""
		},
		FlushInterval: -1, // event streams as they come
	}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		cell, ok := strings.CutPrefix(r.URL.Path, "/c/")
		cell, ok2 := strings.CutSuffix(cell, "/mcp")
		if !ok || !ok2 {
			http.NotFound(rw, r)
			return
		}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(rw, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if slices.Contains(rpcMethods(body), "tools/call") {
				call := &wireCall{protocol: r.Header.Get("Mcp-Protocol-Version"), session: r.Header.Get("Mcp-Session-Id") != ""}
				w.mu.Lock()
				w.seen[cell] = append(w.seen[cell], call)
				w.mu.Unlock()
				rw = &teeWriter{ResponseWriter: rw, copy: &call.answer}
			}
		}
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

// teeWriter keeps a copy of what it writes; Unwrap lets the proxy flush the writer beneath.
type teeWriter struct {
	http.ResponseWriter
	copy io.Writer
}

func (tw *teeWriter) Write(p []byte) (int, error) {
	tw.copy.Write(p)
	return tw.ResponseWriter.Write(p)
}

func (tw *teeWriter) Unwrap() http.ResponseWriter { return tw.ResponseWriter }

func (w *wireRecorder) url(cell string) string { return w.srv.URL + "/c/" + cell + "/mcp" }

// protocols returns the distinct protocols of the cell's tools/call requests.
func (w *wireRecorder) protocols(cell string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var seen []string
	for _, c := range w.seen[cell] {
		seen = append(seen, c.protocol)
	}
	return distinct(seen)
}

// sessions returns how many of the cell's tools/call requests carried a session id, of how many.
func (w *wireRecorder) sessions(cell string) (with, all int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.seen[cell] {
		if c.session {
			with++
		}
	}
	return with, len(w.seen[cell])
}

// answers returns what Legate answered to the cell's tools/call requests.
func (w *wireRecorder) answers(cell string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var all []string
	for _, c := range w.seen[cell] {
		all = append(all, c.answer.String())
	}
	return strings.Join(all, "\n")
}

// progressBefore counts the progress notifications in traffic (Legate's messages, in order)
// before the first one holding result; -1 when none holds it.
func progressBefore(traffic, result string) int {
	i := strings.Index(traffic, result)
	if i < 0 {
		return -1
	}
	return strings.Count(traffic[:i], `"notifications/progress"`)
}

// rpcMethods returns the methods of the JSON-RPC requests in body (one message or a batch).
func rpcMethods(body []byte) []string {
	var msgs []struct{ Method string }
	if err := json.Unmarshal(body, &msgs); err != nil {
		var one struct{ Method string }
		if json.Unmarshal(body, &one) != nil {
			return nil
		}
		msgs = append(msgs, one)
	}
	var methods []string
	for _, m := range msgs {
		methods = append(methods, m.Method)
	}
	return methods
}

func distinct(items []string) []string {
	out := slices.Clone(items)
	slices.Sort(out)
	return slices.Compact(out)
}

// teeCommand is "legate stdio" behind two tee processes that keep what the client sent and
// what Legate answered, one JSON-RPC message a line.
type teeCommand struct {
	argv    []string
	in, out string
}

func stdioTee(t *testing.T, config, stateDir string) *teeCommand {
	t.Helper()
	dir := t.TempDir()
	c := &teeCommand{in: filepath.Join(dir, "in.jsonl"), out: filepath.Join(dir, "out.jsonl")}
	c.argv = []string{"/bin/sh", "-c", `in=$1 out=$2; shift 2; tee -a "$in" | "$@" | tee -a "$out"`, "legate-stdio-tee",
		c.in, c.out, legateBin, "stdio", "--config", config, "--state-dir", stateDir}
	return c
}

// sent returns what Legate wrote to the client.
func (c *teeCommand) sent() string {
	out, _ := os.ReadFile(c.out)
	return string(out)
}

func (c *teeCommand) traffic() string {
	in, _ := os.ReadFile(c.in)
	out, _ := os.ReadFile(c.out)
	return fmt.Sprintf("client → legate:\n%s\nlegate → client:\n%s", in, out)
}

// protocols returns the distinct protocols of the client's tools/call requests: the protocol in
// their _meta (2026-07-28), else the one the initialize result negotiated.
func (c *teeCommand) protocols(t *testing.T) []string {
	t.Helper()
	in, _ := os.ReadFile(c.in)
	out, _ := os.ReadFile(c.out)
	negotiated := ""
	for line := range strings.Lines(string(out)) {
		var m struct {
			Result struct {
				ProtocolVersion string          `json:"protocolVersion"`
				ServerInfo      json.RawMessage `json:"serverInfo"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Result.ProtocolVersion != "" && m.Result.ServerInfo != nil {
			negotiated = m.Result.ProtocolVersion
		}
	}
	var seen []string
	for line := range strings.Lines(string(in)) {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != "tools/call" {
			continue
		}
		if v, ok := m.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string); ok {
			seen = append(seen, v)
		} else {
			seen = append(seen, negotiated)
		}
	}
	return distinct(seen)
}
