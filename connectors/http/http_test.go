package httpconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	httpconn "github.com/legate-mcp/legate/connectors/http"
	"github.com/legate-mcp/legate/connectors/httpkit"
)

func TestContract(t *testing.T) {
	sample, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Run(t, connectortest.Case{
		Type:        "http",
		Config:      string(sample),
		Credentials: map[string]string{"header_value": "k-123456"},
	})
}

// build builds an instance pointing at base with extra config lines.
func build(t *testing.T, base string, extra ...string) connectors.Connector {
	t.Helper()
	cfg := "base_url: " + base + "\nallow_private_networks: true\n" + strings.Join(extra, "\n")
	return connectortest.Build(t, "http", "api", cfg)
}

// callTool runs the call tool of c with args and creds.
func callTool(t *testing.T, c connectors.Connector, args string, creds map[string]string) (*httpconn.Response, error) {
	t.Helper()
	return runTool(t, c.Tools()[0], args, creds)
}

func runTool(t *testing.T, tool connectors.Tool, args string, creds map[string]string) (*httpconn.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := tool.Run(ctx, &connectors.Call{
		Tool: tool.Name, Args: json.RawMessage(args),
		Credentials: connectortest.Creds(creds), OperationID: "op-1",
	})
	if err != nil {
		if res != nil {
			t.Errorf("both a result and an error: %v", res)
		}
		return nil, err
	}
	resp, ok := res.Structured.(*httpconn.Response)
	if !ok {
		t.Fatalf("structured result is %T; want *httpconn.Response", res.Structured)
	}
	// The result must survive the gateway's JSON encoding.
	if _, err := json.Marshal(res.Structured); err != nil {
		t.Fatal(err)
	}
	return resp, nil
}

func wantCode(t *testing.T, err error, code legate.Code) *legate.Error {
	t.Helper()
	var ce *legate.Error
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("error %v; want code %s", err, code)
	}
	return ce
}

// counting is a 127.0.0.1 listener counting accepted connections.
func TestValidate(t *testing.T) {
	tests := map[string]struct {
		cfg  httpconn.Config
		want []string // fields named in the error; none means valid
	}{
		"valid": {cfg: httpconn.Config{BaseURL: "https://api.example.com/v1", Timeout: legate.Duration(time.Second), MaxResponseBytes: 10, Auth: "auto"}},
		"everything wrong at once": {
			cfg:  httpconn.Config{BaseURL: "ftp://x", Timeout: 0, MaxResponseBytes: 0, Auth: "kerberos", HeaderName: "Bad Name"},
			want: []string{"base_url", "timeout", "max_response_bytes", "auth", "header_name"},
		},
		"relative base":    {cfg: okCfg("/v1"), want: []string{"base_url"}},
		"no host":          {cfg: okCfg("https:///v1"), want: []string{"base_url"}},
		"user info":        {cfg: okCfg("https://u:p@api.example.com"), want: []string{"base_url: must not hold user info"}},
		"query":            {cfg: okCfg("https://api.example.com/?k=v"), want: []string{"base_url: must not hold a query"}},
		"fragment":         {cfg: okCfg("https://api.example.com/#x"), want: []string{"base_url: must not hold a fragment"}},
		"loopback":         {cfg: okCfg("http://127.0.0.1:8080"), want: []string{"base_url", "allow_private_networks: true"}},
		"metadata":         {cfg: okCfg("http://169.254.169.254/latest"), want: []string{"base_url", "link-local"}},
		"localhost":        {cfg: okCfg("http://localhost:8080"), want: []string{"base_url", "loopback"}},
		"response too big": {cfg: func() httpconn.Config { c := okCfg("https://a.example"); c.MaxResponseBytes = 65 << 20; return c }(), want: []string{"max_response_bytes"}},
		"header without name": {
			cfg:  func() httpconn.Config { c := okCfg("https://a.example"); c.Auth = "header"; return c }(),
			want: []string{"header_name: is required with auth: header"},
		},
		"bad default headers": {
			cfg: func() httpconn.Config {
				c := okCfg("https://a.example")
				c.HeaderName = "X-Key"
				c.DefaultHeaders = map[string]string{"Authorization": "Bearer x", "Host": "h", "X-Ok": "a\r\nb", "x-key": "v", "Bad Name": "v"}
				return c
			}(),
			want: []string{"default_headers.Authorization", "default_headers.Host", "default_headers.X-Ok", "default_headers.x-key", "default_headers.Bad Name"},
		},
		"negative rate limit": {
			cfg: func() httpconn.Config {
				c := okCfg("https://a.example")
				c.RateLimit = httpkit.RateLimit{PerSecond: -1, Burst: -1}
				return c
			}(),
			want: []string{"rate_limit.per_second", "rate_limit.burst"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := tc.cfg
			c, err := httpconn.New(connectors.Instance{ID: "api"}, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("config accepted; want errors naming %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
			var fe *legate.FieldError
			if !errors.As(err, &fe) {
				t.Errorf("error holds no *legate.FieldError: %v", err)
			}
		})
	}
}

func okCfg(base string) httpconn.Config {
	return httpconn.Config{BaseURL: base, Timeout: legate.Duration(time.Second), MaxResponseBytes: 1024, Auth: "auto"}
}

func TestNewRefusesForeignConfig(t *testing.T) {
	ct, _ := connectors.Lookup("http")
	if _, err := ct.New(connectors.Instance{Config: "nope"}); err == nil {
		t.Fatal("New accepted a string config")
	}
}

func TestDefaultsFromTags(t *testing.T) {
	c := build(t, "http://127.0.0.1:9/x")
	tool := c.Tools()[0]
	if !strings.Contains(tool.Description, "1048576 bytes") || !strings.Contains(tool.Description, "http://127.0.0.1:9/x") {
		t.Errorf("description does not state the base URL and the default limit: %s", tool.Description)
	}
}

func TestTestConnection(t *testing.T) {
	tests := map[string]struct {
		handler http.HandlerFunc
		creds   map[string]string
		code    legate.Code // "" means reachable
	}{
		"ok": {handler: func(w http.ResponseWriter, r *http.Request) {}},
		"404 is reachable": {handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
		}},
		"head refused then get": {handler: func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
			}
		}},
		"credential checked": {
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer good-token" {
					w.WriteHeader(http.StatusUnauthorized)
				}
			},
			creds: map[string]string{"token": "good-token"},
		},
		"unauthorized": {
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
			creds:   map[string]string{"token": "bad-token"},
			code:    legate.CodeAuthExpired,
		},
		"forbidden": {
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) },
			code:    legate.CodePermissionDenied,
		},
		"server error": {
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) },
			code:    legate.CodeTransient,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c := build(t, srv.URL)
			err := c.Test(t.Context(), connectortest.Creds(tc.creds))
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.code)
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		err := build(t, "http://"+addr).Test(t.Context(), nil)
		wantCode(t, err, legate.CodeTransient)
	})
}

func TestClose(t *testing.T) {
	c := build(t, "http://127.0.0.1:9")
	closer, ok := c.(connectors.Closer)
	if !ok {
		t.Fatal("connector is not a Closer")
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
}
