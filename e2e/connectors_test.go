package e2e_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConnectors: an http and a webhook connector, configured with credentials taken from
// environment variables, called by the TypeScript SDK client and by inspector-cli, over
// Streamable HTTP and over stdio. The target server checks the bearer token; the webhook
// receiver checks the HMAC signature.
func TestConnectors(t *testing.T) {
	p := need(t)

	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			for _, client := range []string{"ts-sdk", "inspector-cli"} {
				t.Run(client, func(t *testing.T) {
					f := newFixture(t)
					var c connectorClient
					switch transport + "/" + client {
					case "http/ts-sdk":
						s := serve(t, f.config, f.env...)
						f.logs = s.stderr
						c = &tsConnectorClient{p: p, env: f.env, target: []string{"--http", s.url("127.0.0.1")}}
					case "http/inspector-cli":
						s := serve(t, f.config, f.env...)
						f.logs = s.stderr
						c = &inspectorConnectorClient{p: p, env: f.env, target: []string{s.url("localhost"), "--transport", "http"}}
					case "stdio/ts-sdk":
						c = &tsConnectorClient{p: p, env: f.env, target: []string{"--", legateBin, "stdio", "--config", f.config, "--state-dir", t.TempDir()}}
					case "stdio/inspector-cli":
						target, logs := inspectorStdio(t, "stdio", "--config", f.config, "--state-dir", t.TempDir())
						f.logs = logs
						c = &inspectorConnectorClient{p: p, env: f.env, target: target}
					}
					f.check(t, c)
				})
			}
		})
	}
}

// connectorClient lists the tools and calls web__call and hooks__send; it returns the raw
// outputs of the client for the checks.
type connectorClient interface {
	run(t *testing.T, helloPath string, payload map[string]any) (tools []string, web, hook json.RawMessage, output string)
}

type tsConnectorClient struct {
	p      *peerSet
	env    []string
	target []string
}

func (c *tsConnectorClient) run(t *testing.T, helloPath string, payload map[string]any) ([]string, json.RawMessage, json.RawMessage, string) {
	webArgs, _ := json.Marshal(map[string]any{"method": "GET", "path": helloPath})
	hookArgs, _ := json.Marshal(map[string]any{"payload": payload})
	args := []string{"--call", "web__call", string(webArgs), "--call", "hooks__send", string(hookArgs)}
	// The target goes last: after "--" it is the stdio command.
	r, out := c.p.tsClient(t, c.env, append(args, c.target...)...)
	if len(r.Calls) != 2 {
		t.Fatalf("TypeScript SDK client made %d calls, want 2\n%s", len(r.Calls), out)
	}
	for _, call := range r.Calls {
		if call.Error != nil {
			t.Errorf("tools/call %s: JSON-RPC error %d %s", call.Name, call.Error.Code, call.Error.Message)
		}
	}
	return r.Tools, r.Calls[0].Result, r.Calls[1].Result, out
}

type inspectorConnectorClient struct {
	p      *peerSet
	env    []string
	target []string
}

func (c *inspectorConnectorClient) run(t *testing.T, helloPath string, payload map[string]any) ([]string, json.RawMessage, json.RawMessage, string) {
	tools := c.p.inspectorTools(t, c.env, c.target...)
	web := c.p.inspectorCall(t, c.env, c.target, "web__call", "method=GET", "path="+helloPath)
	raw, _ := json.Marshal(payload)
	hook := c.p.inspectorCall(t, c.env, c.target, "hooks__send", "payload="+string(raw))
	return tools, web, hook, fmt.Sprintf("tools: %v\nweb__call: %s\nhooks__send: %s", tools, web, hook)
}

// fixture is a target HTTP server, a webhook receiver, the secrets and a legate config.
type fixture struct {
	token, secret string // WEB_TOKEN and HOOK_SECRET
	greeting      string // the body /hello answers
	config        string // path of legate's config.yaml
	env           []string
	logs          interface{ String() string } // legate serve's output, if any

	mu         sync.Mutex
	targetHits []string // "METHOD PATH auth-ok|auth-bad"
	deliveries []delivery
}

type delivery struct {
	id, body string
	path     string // the request's path
	held     bool   // it arrived while the receiver held deliveries (hookReceiver.hold)
	sigErr   error  // nil when the signature verified
}

func (d delivery) String() string {
	return fmt.Sprintf("{id: %q, body: %s, signature error: %v}", d.id, d.body, d.sigErr)
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{token: "tok-" + nonce(), secret: "whsec-" + nonce(), greeting: "hello-" + nonce()}

	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := r.Header.Get("Authorization") == "Bearer "+f.token
		f.mu.Lock()
		f.targetHits = append(f.targetHits, fmt.Sprintf("%s %s auth-ok=%v", r.Method, r.URL.Path, ok))
		f.mu.Unlock()
		switch {
		case !ok:
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
		case r.Method == http.MethodGet && r.URL.Path == "/hello":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"greeting":%q}`, f.greeting)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(target.Close)

	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d := delivery{id: r.Header.Get("X-Legate-Delivery"), body: string(body)}
		if r.Method != http.MethodPost || r.URL.Path != "/in" {
			d.sigErr = fmt.Errorf("got %s %s, want POST /in", r.Method, r.URL.Path)
		} else {
			d.sigErr = verifySignature(f.secret, r.Header.Get("X-Legate-Signature"), body, time.Now())
		}
		f.mu.Lock()
		f.deliveries = append(f.deliveries, d)
		f.mu.Unlock()
		if d.sigErr != nil {
			http.Error(w, d.sigErr.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)

	config := fmt.Sprintf(`policy:
  rules:
    - {tool: hooks.send, action: allow}   # a write: without this rule it waits for approval
connectors:
  - id: web
    type: http
    config: {base_url: %q, allow_private_networks: true}
    credentials:
      token: {env: WEB_TOKEN}
  - id: hooks
    type: webhook
    config: {url: %q, allow_private_networks: true}
    credentials:
      signing_secret: {env: HOOK_SECRET}
`, target.URL, receiver.URL+"/in")
	f.config = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(f.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	f.env = []string{"WEB_TOKEN=" + f.token, "HOOK_SECRET=" + f.secret}
	return f
}

// check drives c and verifies what the target and the receiver saw.
func (f *fixture) check(t *testing.T, c connectorClient) {
	mark := nonce()
	tools, web, hook, out := c.run(t, "/hello", map[string]any{"mark": mark, "n": 42})
	t.Cleanup(func() {
		if t.Failed() {
			f.mu.Lock()
			t.Logf("client output:\n%s\ntarget saw: %q\nreceiver saw: %v", out, f.targetHits, f.deliveries)
			f.mu.Unlock()
		}
	})

	if !hasAll(tools, "web__call", "hooks__send") {
		t.Errorf("tools/list = %v, want web__call and hooks__send among them", tools)
	}

	// web__call GET /hello: the target's body comes back, with status 200.
	if r := decodeResult(t, "web__call", web); r != nil {
		if r.IsError {
			t.Errorf("web__call GET /hello: isError result: %s", web)
		}
		if !strings.Contains(string(web), f.greeting) {
			t.Errorf("web__call GET /hello: result lacks the target's body %q: %s", f.greeting, web)
		}
		if st, ok := r.StructuredContent["status"]; r.StructuredContent != nil && (!ok || st != float64(200)) {
			t.Errorf("web__call GET /hello: structuredContent.status = %v, want 200", st)
		}
	}

	// hooks__send: exactly one delivery, signed with HOOK_SECRET, carrying the payload.
	if r := decodeResult(t, "hooks__send", hook); r != nil && r.IsError {
		t.Errorf("hooks__send: isError result: %s", hook)
	}
	f.mu.Lock()
	deliveries := append([]delivery(nil), f.deliveries...)
	f.mu.Unlock()
	if len(deliveries) != 1 {
		t.Errorf("webhook receiver got %d deliveries, want 1", len(deliveries))
	}
	for _, d := range deliveries {
		if d.sigErr != nil {
			t.Errorf("webhook delivery %q: signature: %v", d.id, d.sigErr)
		}
		if d.id == "" {
			t.Errorf("webhook delivery has no X-Legate-Delivery header")
		}
		if !strings.Contains(d.body, mark) {
			t.Errorf("webhook delivery body lacks the payload mark %q: %s", mark, d.body)
		}
	}

	// Secrets travel by environment only: no client output or log shows them.
	shown := out
	if f.logs != nil {
		shown += f.logs.String()
	}
	for name, v := range map[string]string{"WEB_TOKEN": f.token, "HOOK_SECRET": f.secret} {
		if strings.Contains(shown, v) {
			t.Errorf("the value of %s appears in a client's output or legate's log", name)
		}
	}
}

type callResult struct {
	IsError           bool           `json:"isError"`
	StructuredContent map[string]any `json:"structuredContent"`
	Meta              map[string]any `json:"_meta"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func decodeResult(t *testing.T, tool string, raw json.RawMessage) *callResult {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		t.Errorf("%s: no result", tool)
		return nil
	}
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Errorf("%s: decoding the result: %v: %s", tool, err, raw)
		return nil
	}
	return &r
}

// verifySignature checks header "t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>", with t
// within five minutes of now.
func verifySignature(secret, header string, body []byte, now time.Time) error {
	if header == "" {
		return fmt.Errorf("no X-Legate-Signature header")
	}
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("X-Legate-Signature %q: bad t: %v", header, err)
	}
	if d := now.Sub(time.Unix(unix, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("X-Legate-Signature %q: t is %v away from now", header, d)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	want := mac.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("X-Legate-Signature %q: no v1 matches HMAC-SHA256 of %q", header, ts+"."+string(body))
}

func nonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
