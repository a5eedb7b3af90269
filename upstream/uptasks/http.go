package uptasks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/legate-mcp/legate/upstream/relay"
)

// overHTTP sends the link's requests on a Streamable HTTP session,
// through the relay's connection: the upstream's requests on a response's
// stream go to the call whose token is the request's id (relay.Peer), its
// notifications where the tap sends them.
type overHTTP struct{ c *relay.Conn }

func (h overHTTP) call(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	body, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	resp, err := h.c.Post(rctx, body, h.c.Version(), method, "")
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	raw, err := h.c.ReadAnswer(resp, `"`+id+`"`, false)
	if err != nil {
		resp.Body.Close()
		cancel()
		if ctx.Err() != nil {
			h.c.NotifyCancelled(id, context.Cause(ctx))
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	// What is left of the stream (normally its end) is read in the
	// background, for at most a few seconds, or until the manager closes.
	h.c.Go(func() {
		defer cancel()
		defer context.AfterFunc(h.c.Life, cancel)()
		t := time.AfterFunc(relay.DrainTimeout, cancel)
		defer t.Stop()
		relay.Drain(resp)
	})
	return raw, nil
}

// Watch returns rt, which reads the tools/list results the go-sdk client
// receives over HTTP (JSON or an event stream) for the tools' task support.
func (t *Tools) Watch(rt http.RoundTripper) http.RoundTripper {
	return &watch{base: rt, tools: t}
}

type watch struct {
	base  http.RoundTripper
	tools *Tools
}

func (w *watch) RoundTrip(r *http.Request) (*http.Response, error) {
	// The go-sdk client writes a request's method near its start:
	// {"jsonrpc":"2.0","id":7,"method":"tools/list",...}.
	listing := false
	if r.Method == http.MethodPost && r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			var head [128]byte
			n, _ := io.ReadFull(b, head[:])
			b.Close()
			listing = bytes.Contains(head[:n], []byte(`"method":"tools/list"`))
		}
	}
	resp, err := w.base.RoundTrip(r)
	if err != nil || !listing {
		return resp, err
	}
	resp.Body = &listingBody{ReadCloser: resp.Body, tools: w.tools, sse: bytes.HasPrefix([]byte(resp.Header.Get("Content-Type")), []byte("text/event-stream"))}
	return resp, nil
}

// listingBody keeps a tools/list response as it is read, and reads its
// results at its end.
type listingBody struct {
	io.ReadCloser
	tools *Tools
	sse   bool
	buf   bytes.Buffer
	done  bool
}

func (b *listingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF {
		b.end()
	}
	return n, err
}

func (b *listingBody) Close() error {
	b.end()
	return b.ReadCloser.Close()
}

// end reads the messages of the body.
func (b *listingBody) end() {
	if b.done {
		return
	}
	b.done = true
	if !b.sse {
		b.message(b.buf.Bytes())
		return
	}
	var data []byte
	sc := bufio.NewScanner(&b.buf)
	sc.Buffer(nil, 1<<30) // each message is bounded below (max_result_bytes)
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		switch {
		case len(line) == 0:
			b.message(data)
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
	b.message(data)
}

func (b *listingBody) message(raw []byte) {
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if len(raw) > 0 && json.Unmarshal(raw, &msg) == nil && len(msg.Result) > 0 {
		b.tools.read(msg.Result)
	}
}
