package fastpath

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/internal/mcpjson"
	"github.com/legate-mcp/legate/server/jsonlines"
)

// The stdio session of `legate stdio` takes the same fast paths as an HTTP
// session: tools/list from the catalog's encoded list, and tools/call of a
// native tool or of an upstream's tool relayed as bytes, answered as one
// line each without the go-sdk server's decoding and encoding (P7b over
// stdio, docs/BENCHMARKS.md). package jsonlines offers each line it reads
// to Line before the SDK sees it. A client of protocol 2026-07-28, which
// does not initialize and names its protocol in each request's _meta, is
// answered statelessly, as over HTTP.

// Line takes a request line the stdio session ss read, answering it on
// out from a goroutine of its own, or reports false for the SDK to answer
// it as usual. ctx is the session's.
func (f *Paths) Line(ctx context.Context, ss *mcp.ServerSession, line []byte, out *jsonlines.Out) bool {
	if ss == nil || !bytes.Contains(line, []byte(`"tools/`)) && !bytes.Contains(line, []byte(`"notifications/cancelled"`)) {
		return false
	}
	// A session is initialized by its client's initialize, or by the first
	// request of a 2026-07-28 client, which names its protocol in _meta:
	// that one is the SDK's, which learns the session's protocol from it.
	init := ss.InitializeParams()
	if init == nil {
		return false
	}
	msg, ok := decodeMessage(line)
	if !ok {
		return false
	}
	session := ss // of the call: nil for a stateless one
	switch {
	case fastVersions[init.ProtocolVersion]:
		if namesProtocol(msg.Params) {
			return false // the SDK's: it refuses a request naming one on a session
		}
	case init.ProtocolVersion == statelessVersion:
		if msg.Method != "notifications/cancelled" {
			if !statelessMeta(msg.Params) {
				return false // the SDK answers it by the session's protocol
			}
			session = nil
		}
	default:
		return false
	}
	switch msg.Method {
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		if !exactID(msg.ID) || len(msg.Params) > 0 && mcpjson.Unmarshal(msg.Params, &p) != nil || p.Cursor != "" {
			return false
		}
		go func() {
			defer out.Done()
			list := f.gw.List(ctx, nil, session)
			w := &lineWriter{out: out, id: msg.ID}
			if session == nil {
				w.result(f.statelessList(list)...)
			} else {
				w.result(list)
			}
			f.metrics.FastList.Inc()
		}()
		return true
	case "tools/call":
		if !exactID(msg.ID) {
			return false
		}
		c, _, ok := f.newCall(nil, session, msg.Params)
		if !ok {
			return false
		}
		// Registered before the next line is read, so that the client's
		// notifications/cancelled finds it.
		ctx, cancel := context.WithCancelCause(ctx)
		key := callKey{ss, string(msg.ID)}
		f.calls.Store(key, cancel)
		go func() {
			defer f.calls.Delete(key)
			defer cancel(nil)
			if !f.run(ctx, c, &lineWriter{out: out, id: msg.ID}) {
				out.HandBack()
				return
			}
			out.Done()
		}()
		return true
	case "notifications/cancelled":
		f.cancel(ss, msg.Params) // and the SDK hears it as usual
	}
	return false
}

// exactID reports whether id is a JSON-RPC request id the SDK keeps as it
// was written, so that echoing its bytes is the SDK's answer: a string, or
// an integer of at most 15 digits (the SDK decodes numbers as float64).
func exactID(id json.RawMessage) bool {
	if len(id) > 0 && id[0] == '"' {
		var s string
		return mcpjson.Unmarshal(id, &s) == nil
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// lineWriter writes a fast call's answer on a stdio session: progress
// notifications, then the response, a line each.
type lineWriter struct {
	out *jsonlines.Out
	id  json.RawMessage
}

func (l *lineWriter) Progress(p *mcp.ProgressNotificationParams) {
	if b, err := json.Marshal(p); err == nil {
		l.out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":`), b, []byte(`}`))
	}
}

func (l *lineWriter) result(parts ...[]byte) {
	msg := append([][]byte{[]byte(`{"jsonrpc":"2.0","id":`), l.id, []byte(`,"result":`)}, parts...)
	l.out.Write(append(msg, []byte(`}`))...)
}

func (l *lineWriter) error(e *jsonrpc.Error) {
	b, _ := json.Marshal(e)
	l.out.Write([]byte(`{"jsonrpc":"2.0","id":`), l.id, []byte(`,"error":`), b, []byte(`}`))
}

// plainError is for stateless HTTP requests; a stdio session has no status.
func (l *lineWriter) plainError(_ int, e *jsonrpc.Error) { l.error(e) }

func (l *lineWriter) end() {}

var _ answer = (*lineWriter)(nil)
