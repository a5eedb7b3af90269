package upstream_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// The token of the header_env value "Bearer <token>": with a / and a +,
// which encoders escape.
const (
	echoToken  = "s3cr3t/Value+7f1c9a"
	echoHeader = "Bearer " + echoToken
)

// echoForms are the forms in which the echoer returns its credential,
// by tool name.
var echoForms = map[string]string{
	"plain":         "invalid token: " + echoToken,
	"json-escaped":  `s3cr3t\/Value+7f1c9a`,
	"u-escaped":     `s3cr3t\u002fValue\u002b7f1c9a`,
	"mixed escapes": `s3cr3t\/Value\u002B7f1c9a`,
	"query":         url.QueryEscape(echoToken),
	"path":          url.PathEscape(echoToken),
	"base64":        base64.StdEncoding.EncodeToString([]byte("x" + echoToken)),
	"base64url":     base64.RawURLEncoding.EncodeToString([]byte("tok=" + echoToken + "&")),
	"whole header":  base64.StdEncoding.EncodeToString([]byte(echoHeader)),
}

// echoed reports whether s holds a form of the token: its random part, or
// the middle of an encoded form (whose ends depend on the neighbours).
func echoed(s string) bool {
	if strings.Contains(s, "7f1c9a") {
		return true
	}
	for _, f := range echoForms {
		if len(f) > 12 && strings.Contains(s, f[4:len(f)-4]) {
			return true
		}
	}
	return false
}

// echoer is a Streamable HTTP upstream that answers every call, error and
// log message with its credential in one form or another, as a careless
// server would: each tool's result and its log message on the call's event
// stream carry the form its name gives; "rpc-error" fails with the token
// in a JSON-RPC error, "http-error" with a 401 whose body holds it.
type echoer struct{}

func (echoer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(body, &msg)
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}
	w.Header().Set("X-Echo", r.Header.Get("Authorization"))
	switch {
	case msg.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"echoer","version":"1"}}`)
	case msg.Method == "tools/list":
		var tools []string
		for name := range echoForms {
			tools = append(tools, `{"name":"`+name+`","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
		}
		reply(`{"tools":[` + strings.Join(append(tools, `{"name":"rpc-error","inputSchema":{"type":"object"}}`, `{"name":"http-error","inputSchema":{"type":"object"}}`), ",") + `]}`)
	case msg.Params.Name == "http-error":
		http.Error(w, "invalid token: "+echoToken, http.StatusUnauthorized)
	case msg.Params.Name == "rpc-error":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"invalid token: %s","data":{"token":"%s"}}}`, msg.ID, echoToken, echoForms["json-escaped"])
	case msg.Method == "tools/call":
		form := echoForms[msg.Params.Name]
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"using %s\"}}\n\n", form)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"got %s\"}]}}\n\n", msg.ID, form)
	default:
		reply(`{}`)
	}
}

// The secret parts of an upstream's header_env value (the token after the
// scheme) are masked in every form the upstream may echo them, in results,
// errors, logs and status, on both call paths.
func TestUpstreamMasksEchoedCredential(t *testing.T) { bothPaths(t, upstreamMasks) }

func upstreamMasks(t *testing.T) {
	noLeaks(t)
	lookup := func(k string) (string, bool) { return echoHeader, k == "ECHO_TOKEN" }
	srv := upstreamtest.NewServer(t, echoer{})
	logs := &syncBuffer{}
	m := newManager(t, memStore(t), upstream.Options{LookupEnv: lookup, Logger: debugLogger(logs)},
		upstream.Config{ID: "echo", URL: srv.URL(), HeaderEnv: map[string]string{"Authorization": "ECHO_TOKEN"}})
	m.Start(upstreamtest.Context(t))
	waitTool(t, m, "echo", "http-error", 10*time.Second)

	for name := range echoForms {
		res, err := call(m, tool(m, "echo", name), "")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if text := upstreamtest.Text(res); echoed(text) || !strings.Contains(text, "[redacted]") {
			t.Errorf("%s: result %q, want the token masked", name, text)
		}
	}
	for _, name := range []string{"rpc-error", "http-error"} {
		_, err := call(m, tool(m, "echo", name), "")
		if err == nil || echoed(err.Error()) {
			t.Errorf("%s: error %v, want one with the token masked", name, err)
		}
	}
	st, _ := m.Status(context.Background())
	b, _ := json.Marshal(st)
	if echoed(string(b)) {
		t.Errorf("status %s", b)
	}
	m.Close()
	if echoed(logs.String()) {
		t.Errorf("the token leaked into the logs:\n%s", logs.String())
	}
}
