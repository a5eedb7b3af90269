package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/webhook"
)

func TestContract(t *testing.T) {
	sample, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Run(t, connectortest.Case{
		Type:        "webhook",
		Config:      string(sample),
		Credentials: map[string]string{"signing_secret": "s3cret"},
	})
}

// attempt is what the receiver saw of one attempt.
type attempt struct {
	at     time.Time
	header http.Header
	body   []byte
	verify error // webhook.Verify with the receiver's secret
}

// receiver is a webhook receiver on 127.0.0.1 that verifies signatures
// with secret and answers attempt i with reply(i, w).
type receiver struct {
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	seen   []attempt
}

func newReceiver(t *testing.T, secret string, reply func(i int, w http.ResponseWriter)) *receiver {
	t.Helper()
	rc := &receiver{secret: secret}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a := attempt{at: time.Now(), header: r.Header.Clone(), body: body}
		if secret != "" {
			a.verify = webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), body, time.Minute, time.Now())
		}
		rc.mu.Lock()
		rc.seen = append(rc.seen, a)
		i := len(rc.seen) - 1
		rc.mu.Unlock()
		if reply != nil {
			reply(i, w)
		}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) attempts() []attempt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]attempt(nil), rc.seen...)
}

func build(t *testing.T, url string, extra ...string) connectors.Connector {
	t.Helper()
	cfg := "url: " + url + "\nallow_private_networks: true\n" + strings.Join(extra, "\n")
	return connectortest.Build(t, "webhook", "hook", cfg)
}

func send(t *testing.T, c connectors.Connector, args, opID string, creds map[string]string) (*webhook.Delivery, error) {
	t.Helper()
	return sendCtx(t.Context(), t, c, args, opID, creds)
}

func sendCtx(ctx context.Context, t *testing.T, c connectors.Connector, args, opID string, creds map[string]string) (*webhook.Delivery, error) {
	t.Helper()
	tool := c.Tools()[0]
	res, err := tool.Run(ctx, &connectors.Call{
		Tool: tool.Name, Args: json.RawMessage(args),
		Credentials: connectortest.Creds(creds), OperationID: opID,
	})
	if err != nil {
		return nil, err
	}
	d, ok := res.Structured.(*webhook.Delivery)
	if !ok {
		t.Fatalf("structured result is %T", res.Structured)
	}
	return d, nil
}

func wantCode(t *testing.T, err error, code legate.Code) *legate.Error {
	t.Helper()
	var ce *legate.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("error %v; want code %s", err, code)
	}
	return ce
}

func TestValidate(t *testing.T) {
	ok := func(mut func(*webhook.Config)) *webhook.Config {
		c := &webhook.Config{URL: "https://hooks.example.com/in?key=1", Timeout: legate.Duration(time.Second), MaxAttempts: 5, MaxPayloadBytes: 1024}
		if mut != nil {
			mut(c)
		}
		return c
	}
	tests := map[string]struct {
		cfg  *webhook.Config
		want []string
	}{
		"valid": {cfg: ok(nil)},
		"everything wrong": {
			cfg:  &webhook.Config{URL: "ftp://x", MaxAttempts: 0},
			want: []string{"url", "timeout", "max_attempts", "max_payload_bytes"},
		},
		"too many attempts": {cfg: ok(func(c *webhook.Config) { c.MaxAttempts = 21 }), want: []string{"max_attempts"}},
		"negative rate":     {cfg: ok(func(c *webhook.Config) { c.RateLimit = httpkit.RateLimit{PerSecond: -2} }), want: []string{"rate_limit.per_second"}},
		"huge payloads":     {cfg: ok(func(c *webhook.Config) { c.MaxPayloadBytes = 17 << 20 }), want: []string{"max_payload_bytes"}},
		"user info":         {cfg: ok(func(c *webhook.Config) { c.URL = "https://u:p@hooks.example.com" }), want: []string{"url: must not hold user info"}},
		"fragment":          {cfg: ok(func(c *webhook.Config) { c.URL = "https://hooks.example.com/#x" }), want: []string{"url: must not hold a fragment"}},
		"metadata":          {cfg: ok(func(c *webhook.Config) { c.URL = "http://169.254.169.254/" }), want: []string{"url", "allow_private_networks: true"}},
		"private allowed": {cfg: ok(func(c *webhook.Config) {
			c.URL = "http://10.0.0.5/in"
			c.AllowPrivateNetworks = true
		})},
		"bad headers": {
			cfg: ok(func(c *webhook.Config) {
				c.Headers = map[string]string{"Authorization": "x", "X-Legate-Delivery": "x", "Host": "x", "X-Ok": "a\nb", "Bad Name": "x"}
			}),
			want: []string{"headers.Authorization", "headers.X-Legate-Delivery", "headers.Host", "headers.X-Ok", "headers.Bad Name"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := webhook.New(connectors.Instance{ID: "hook"}, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want errors naming %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestTestConnection(t *testing.T) {
	tests := map[string]struct {
		status int
		code   legate.Code
	}{
		"ok":                 {200, ""},
		"head not allowed":   {405, ""},
		"unsigned refused":   {401, ""},
		"receiver is broken": {502, legate.CodeTransient},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var method string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				method = r.Method
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			err := build(t, srv.URL).Test(t.Context(), connectortest.Creds{"signing_secret": "s"})
			if method != http.MethodHead {
				t.Errorf("Test sent %s; want HEAD (no delivery)", method)
			}
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.code)
		})
	}
}

func TestClassAndClose(t *testing.T) {
	c := build(t, "http://127.0.0.1:9/in")
	if cl := c.Tools()[0].ClassOf(json.RawMessage(`{"payload":1}`)); cl != legate.ClassWrite {
		t.Errorf("class %s; want write", cl)
	}
	if err := c.(connectors.Closer).Close(); err != nil {
		t.Fatal(err)
	}
}
