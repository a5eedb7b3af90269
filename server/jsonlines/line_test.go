package jsonlines

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzStdioLine: whatever a line holds, screening either passes on a
// message the SDK decodes to the same id, or answers with a well-formed
// -32700 or -32600 error whose id is null or the line's own.
func FuzzStdioLine(f *testing.F) {
	for _, seed := range []string{
		`this is not json`, `{}`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `null`, `42`, `"s"`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":"p"}`,
		`{"jsonrpc":"2.0","id":"\u00e9\ud800","method":""}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if elems, ok := splitBatch(line, false); ok {
			for _, e := range elems {
				checkScreen(t, e)
			}
			return
		}
		checkScreen(t, line)
	})
}

// checkScreen checks what screening makes of one message.
func checkScreen(t *testing.T, line []byte) {
	t.Helper()
	{
		msg, reply := screenLine(line, false, MaxLine)
		if (msg == nil) == (reply == nil) {
			t.Fatalf("%q: want a message or a reply, got %v and %v", line, msg, reply)
		}
		if msg != nil {
			checkPassed(t, line, msg)
			return
		}
		var out struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal(reply.encode(), &out); err != nil || out.JSONRPC != "2.0" || out.Error == nil {
			t.Fatalf("%q: malformed reply %s", line, reply.encode())
		}
		if c := out.Error.Code; c != jsonrpc.CodeParseError && c != jsonrpc.CodeInvalidRequest {
			t.Fatalf("%q: code %d", line, c)
		}
		if string(out.ID) != "null" && !validRequestID(out.ID) {
			t.Fatalf("%q: reply id %s", line, out.ID)
		}
	}
}

// checkPassed checks a message screening let through: the SDK decodes the
// line, and a request keeps the id the client sent.
func checkPassed(t *testing.T, line []byte, msg jsonrpc.Message) {
	t.Helper()
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		t.Fatalf("%q passed but the SDK refuses it: %v", line, err)
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return
	}
	var sent struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(line, &sent)
	kept, _ := json.Marshal(req.ID.Raw())
	var a, b any
	json.Unmarshal(sent.ID, &a)
	json.Unmarshal(kept, &b)
	if a != b {
		t.Fatalf("%q: id %s answered as %s", line, sent.ID, kept)
	}
}

// A line too long is answered and skipped; a malformed response is only
// logged (answering it could start an endless exchange); what follows is
// served.
func TestLineTransportSkipsAndGoesOn(t *testing.T) {
	cases := map[string]struct {
		first     string
		wantReply string // "" for none
	}{
		"too long":           {`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 200) + `"}}`, `"code":-32600`},
		"malformed response": {`{"jsonrpc":"1.0","id":1,"result":{}}`, ""},
		"null id response":   {`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, ""},
		"blank line":         {"  \t", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			in := strings.NewReader(c.first + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
			tr := &Transport{R: in, W: &out, Log: slog.New(slog.DiscardHandler), Max: 100}
			conn, err := tr.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			msg, err := conn.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || req.Method != "ping" || req.ID.Raw() != int64(2) {
				t.Fatalf("passed on %#v", msg)
			}
			got := out.String() // the reply to the first line, if any, came before the ping
			if c.wantReply == "" && got != "" || c.wantReply != "" && (!strings.Contains(got, c.wantReply) || strings.Count(got, "\n") != 1) {
				t.Fatalf("wrote %q, want a reply with %q", got, c.wantReply)
			}
			// The end of input is reported once the ping is answered.
			ended := make(chan error, 1)
			go func() { _, err := conn.Read(context.Background()); ended <- err }()
			select {
			case err := <-ended:
				t.Fatalf("the end reported before the ping was answered: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			if err := conn.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			if err := <-ended; err != io.EOF {
				t.Fatalf("at the end of input: %v", err)
			}
			if want := got + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"; out.String() != want {
				t.Fatalf("wrote %q, want %q", out.String(), want)
			}
		})
	}
}

// A batch is served member by member and answered with one array, once
// every request in it has its response; a malformed member gets its error
// in that array, and a request id already waiting is refused.
func TestLineTransportBatch(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":"two","method":"b"},{"x":1},` +
		`{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"method":"a"}]` + "\n" +
		`[{"jsonrpc":"2.0","method":"only-a-notification"}]` + "\n"
	var out lockedWriter
	tr := &Transport{R: strings.NewReader(in), W: &out, Log: slog.New(slog.DiscardHandler), Max: 1 << 20}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var ids []jsonrpc.ID
	var methods []string
	for range 4 {
		msg, err := conn.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		req := msg.(*jsonrpc.Request)
		methods = append(methods, req.Method)
		if req.IsCall() {
			ids = append(ids, req.ID)
		}
	}
	if strings.Join(methods, ",") != "a,b,n,only-a-notification" || len(ids) != 2 {
		t.Fatalf("served %v (ids %v)", methods, ids)
	}
	ctx := context.Background()
	if err := conn.Write(ctx, &jsonrpc.Response{ID: ids[1], Result: json.RawMessage(`"B"`)}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "" {
		t.Fatalf("answered before the batch was complete: %s", got)
	}
	if err := conn.Write(ctx, &jsonrpc.Response{ID: ids[0], Result: json.RawMessage(`"A"`)}); err != nil {
		t.Fatal(err)
	}
	want := `[{"jsonrpc":"2.0","id":1,"result":"A"},{"jsonrpc":"2.0","id":"two","result":"B"},` +
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}},` +
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: another request of a batch under way has this id"}}]` + "\n"
	if got := out.String(); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// lockedWriter is a goroutine-safe bytes.Buffer.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
