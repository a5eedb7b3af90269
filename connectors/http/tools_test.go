package httpconn_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	httpconn "github.com/legate-mcp/legate/connectors/http"
)

// recorded is what the test server saw of one request.
type recorded struct {
	Method, Path, RawPath, Query string
	Header                       http.Header
	Body                         string
}

// recorder is a test API that records requests and answers with handler.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []recorded
}

func newRecorder(t *testing.T, handler http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, recorded{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(b)})
		rec.mu.Unlock()
		if handler != nil {
			handler(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.got...)
}

func (r *recorder) last(t *testing.T) recorded {
	t.Helper()
	got := r.requests()
	if len(got) == 0 {
		t.Fatal("the server saw no request")
	}
	return got[len(got)-1]
}

func TestCallGet(t *testing.T) {
	rec := newRecorder(t, nil)
	c := build(t, rec.srv.URL+"/api/v1")
	resp, err := callTool(t, c, `{"path":"users/42?expand=1","query":{"fields":"name,email"}}`, map[string]string{"token": "tok-secret"})
	if err != nil {
		t.Fatal(err)
	}
	got := rec.last(t)
	if got.Method != "GET" || got.Path != "/api/v1/users/42" {
		t.Errorf("server saw %s %s; want GET /api/v1/users/42", got.Method, got.Path)
	}
	q, _ := url.ParseQuery(got.Query)
	if q.Get("expand") != "1" || q.Get("fields") != "name,email" {
		t.Errorf("query %q", got.Query)
	}
	if got.Header.Get("Authorization") != "Bearer tok-secret" {
		t.Errorf("Authorization %q", got.Header.Get("Authorization"))
	}
	if resp.Status != 200 || resp.Body != `{"ok":true}` || resp.BodyBase64 != "" || resp.Truncated || resp.Size != 11 {
		t.Errorf("response %+v", resp)
	}
	if resp.Headers["x-upstream"] != "yes" || resp.Headers["content-type"] != "application/json" {
		t.Errorf("headers %v", resp.Headers)
	}
}

func TestCallJSONBodyKeepsNumbers(t *testing.T) {
	rec := newRecorder(t, nil)
	c := build(t, rec.srv.URL)
	_, err := callTool(t, c, `{"method":"post","path":"items","json":{"id": 12345678901234567890, "price": 1.10, "tags": ["a"]}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rec.last(t)
	if got.Method != "POST" || got.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s with Content-Type %q", got.Method, got.Header.Get("Content-Type"))
	}
	if got.Body != `{"id":12345678901234567890,"price":1.10,"tags":["a"]}` {
		t.Errorf("body %s", got.Body)
	}
}

func TestCallRawBody(t *testing.T) {
	rec := newRecorder(t, nil)
	c := build(t, rec.srv.URL)
	_, err := callTool(t, c, `{"method":"PUT","path":"x","body":"a=1&b=2","headers":{"Content-Type":"application/x-www-form-urlencoded"}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rec.last(t)
	if got.Body != "a=1&b=2" || got.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("body %q, Content-Type %q", got.Body, got.Header.Get("Content-Type"))
	}
}

func TestCallRefusals(t *testing.T) {
	rec := newRecorder(t, nil)
	c := build(t, rec.srv.URL+"/api", "header_name: X-API-Key")
	tests := map[string]string{
		"body and json":         `{"method":"POST","body":"x","json":{}}`,
		"unknown method":        `{"method":"TRACE"}`,
		"connect":               `{"method":"CONNECT"}`,
		"dot dot":               `{"path":"../admin"}`,
		"dot dot inside":        `{"path":"users/../../admin"}`,
		"dot dot at end":        `{"path":"users/.."}`,
		"single dot":            `{"path":"./users"}`,
		"encoded dot dot":       `{"path":"%2e%2e/admin"}`,
		"encoded upper":         `{"path":"%2E%2E%2Fadmin"}`,
		"encoded slash":         `{"path":"..%2fadmin"}`,
		"double encoded":        `{"path":"%252e%252e/admin"}`,
		"tomcat path parameter": `{"path":"..;/admin"}`,
		"backslash":             `{"path":"users\\..\\admin"}`,
		"encoded backslash":     `{"path":"users%5c..%5cadmin"}`,
		"protocol relative":     `{"path":"//evil.example/x"}`,
		"absolute":              `{"path":"http://evil.example/"}`,
		"absolute https":        `{"path":"HTTPS://evil.example"}`,
		"fragment":              `{"path":"users#top"}`,
		"nul":                   `{"path":"users%00"}`,
		"newline":               `{"path":"users\nHost: x"}`,
		"bad escape":            `{"path":"users%zz"}`,
		"bad query":             `{"path":"users?a=%zz"}`,
		"authorization header":  `{"headers":{"Authorization":"Bearer stolen"}}`,
		"lower-case cookie":     `{"headers":{"cookie":"s=1"}}`,
		"credential header":     `{"headers":{"x-api-key":"other"}}`,
		"host header":           `{"headers":{"Host":"evil.example"}}`,
		"transfer-encoding":     `{"headers":{"Transfer-Encoding":"chunked"}}`,
		"proxy authorization":   `{"headers":{"Proxy-Authorization":"x"}}`,
		"header injection":      `{"headers":{"X-A":"1\r\nX-Injected: 1"}}`,
		"bad header name":       `{"headers":{"Bad Name":"1"}}`,
		"mistyped argument":     `{"query":{"a":1}}`,
		"json with wrong case":  `{"JSON":{}}`,
		"unknown argument":      `{"url":"http://x"}`,
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := callTool(t, c, args, nil)
			wantCode(t, err, legate.CodeInvalidArgument)
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("the server saw %d request(s); want 0", n)
	}
}

func TestCallPaths(t *testing.T) {
	rec := newRecorder(t, nil)
	tests := map[string]struct {
		base, path, want string
	}{
		"empty path":          {"/api", "", "/api"},
		"slash":               {"/api", "/", "/api"},
		"relative":            {"/api", "users", "/api/users"},
		"leading slash":       {"/api", "/users", "/api/users"},
		"base trailing slash": {"/api/", "users", "/api/users"},
		"base root":           {"", "users", "/users"},
		"encoded slash kept":  {"/api", "projects/group%2Fproj", "/api/projects/group%2Fproj"},
		"colon segment":       {"/api", "documents:batchGet", "/api/documents:batchGet"},
		"space escaped":       {"/api", "a b", "/api/a%20b"},
		"unicode escaped":     {"/api", "café", "/api/caf%C3%A9"},
		"dots inside names":   {"/api", "v1.2/file..txt", "/api/v1.2/file..txt"},
		"trailing slash kept": {"/api", "users/", "/api/users/"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := build(t, rec.srv.URL+tc.base)
			args, _ := json.Marshal(map[string]string{"path": tc.path})
			if _, err := callTool(t, c, string(args), nil); err != nil {
				t.Fatal(err)
			}
			if got := rec.last(t).RawPath; got != tc.want {
				t.Errorf("server saw path %q; want %q", got, tc.want)
			}
		})
	}
}

func TestCallAuth(t *testing.T) {
	// The server echoes the credential it received: the result must mask it.
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Echo", r.Header.Get("Authorization")+r.Header.Get("X-API-Key"))
		io.WriteString(w, "auth="+r.Header.Get("Authorization")+" key="+r.Header.Get("X-API-Key"))
	})
	tests := map[string]struct {
		config     []string
		creds      map[string]string
		wantHeader string // the credential header the server must see, as name=value
		secret     string // must not appear in the result
		code       legate.Code
	}{
		"auto bearer": {
			creds: map[string]string{"token": "tok-123456"}, wantHeader: "Authorization=Bearer tok-123456", secret: "tok-123456",
		},
		"auto basic": {
			creds:      map[string]string{"username": "ann", "password": "pw-secret"},
			wantHeader: "Authorization=Basic YW5uOnB3LXNlY3JldA==", secret: "pw-secret",
		},
		"auto header": {
			config: []string{"header_name: X-API-Key"}, creds: map[string]string{"header_value": "key-98765"},
			wantHeader: "X-Api-Key=key-98765", secret: "key-98765",
		},
		"auto none": {wantHeader: "Authorization="},
		"auto username only is none": {
			creds: map[string]string{"username": "ann"}, wantHeader: "Authorization=",
		},
		"explicit basic without password": {
			config: []string{"auth: basic"}, creds: map[string]string{"username": "ann"},
			wantHeader: "Authorization=Basic YW5uOg==",
		},
		"explicit none ignores token": {
			config: []string{"auth: none"}, creds: map[string]string{"token": "tok-123456"}, wantHeader: "Authorization=",
		},
		"explicit bearer missing token": {config: []string{"auth: bearer"}, code: legate.CodeConfigError},
		"explicit header missing value": {
			config: []string{"auth: header", "header_name: X-API-Key"}, code: legate.CodeConfigError,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := build(t, rec.srv.URL, tc.config...)
			resp, err := callTool(t, c, `{}`, tc.creds)
			if tc.code != "" {
				ce := wantCode(t, err, tc.code)
				for _, v := range tc.creds {
					if strings.Contains(ce.Error(), v) {
						t.Errorf("error holds a credential value: %v", ce)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name, value, _ := strings.Cut(tc.wantHeader, "=")
			if got := rec.last(t).Header.Get(name); got != value {
				t.Errorf("server saw %s %q; want %q", name, got, value)
			}
			if tc.secret != "" {
				out, _ := json.Marshal(resp)
				if strings.Contains(string(out), tc.secret) {
					t.Errorf("result holds the credential: %s", out)
				}
				if !strings.Contains(resp.Body, "[redacted]") || !strings.Contains(resp.Headers["x-echo"], "[redacted]") {
					t.Errorf("echoed credential not masked: %+v", resp)
				}
			}
		})
	}
}

func TestCallRedirects(t *testing.T) {
	var sawKey, sawAuth atomic.Value
	other := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		sawKey.Store(r.Header.Get("X-API-Key"))
		sawAuth.Store(r.Header.Get("Authorization"))
	})
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.srv.URL+"/landing", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/landing", http.StatusFound)
		}
	})
	t.Run("cross-origin drops the credential", func(t *testing.T) {
		c := build(t, rec.srv.URL, "header_name: X-API-Key")
		if _, err := callTool(t, c, `{"path":"away"}`, map[string]string{"header_value": "key-98765"}); err != nil {
			t.Fatal(err)
		}
		if k := sawKey.Load(); k != "" {
			t.Errorf("the other origin received X-API-Key %q", k)
		}
		c = build(t, rec.srv.URL)
		if _, err := callTool(t, c, `{"path":"away"}`, map[string]string{"token": "tok-123456"}); err != nil {
			t.Fatal(err)
		}
		if a := sawAuth.Load(); a != "" {
			t.Errorf("the other origin received Authorization %q", a)
		}
	})
	t.Run("same origin keeps it", func(t *testing.T) {
		c := build(t, rec.srv.URL, "header_name: X-API-Key")
		if _, err := callTool(t, c, `{"path":"here"}`, map[string]string{"header_value": "key-98765"}); err != nil {
			t.Fatal(err)
		}
		if got := rec.last(t); got.Path != "/landing" || got.Header.Get("X-API-Key") != "key-98765" {
			t.Errorf("landing saw %s with key %q", got.Path, got.Header.Get("X-API-Key"))
		}
	})
}

func TestCallRefusesPrivateNetworks(t *testing.T) {
	// Built without Validate, which would refuse this base_url at start.
	l := connectortest.NewListener(t)
	cfg := okCfg("http://" + l.Addr() + "/api")
	c, err := httpconn.New(connectors.Instance{ID: "api"}, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = callTool(t, c, `{"path":"x"}`, map[string]string{"token": "tok-123456"})
	ce := wantCode(t, err, legate.CodePermissionDenied)
	if !strings.Contains(ce.Message, "allow_private_networks: true") || !strings.Contains(ce.Message, "refused") {
		t.Errorf("message %q does not say the address was refused and how to allow it", ce.Message)
	}
	if err := c.Test(t.Context(), nil); err == nil {
		t.Error("Test reached a private address")
	}
	if n := l.Connections(t); n != 0 {
		t.Fatalf("listener accepted %d connection(s); want 0", n)
	}
}

func TestClassFor(t *testing.T) {
	c := build(t, "http://127.0.0.1:9")
	tool := c.Tools()[0]
	if tool.Class != legate.ClassWrite {
		t.Errorf("declared class %s; want write", tool.Class)
	}
	tests := map[string]legate.Class{
		`{}`:                                 legate.ClassRead,
		`{"method":"GET"}`:                   legate.ClassRead,
		`{"method":"head"}`:                  legate.ClassRead,
		`{"method":"OPTIONS"}`:               legate.ClassRead,
		`{"method":"POST"}`:                  legate.ClassWrite,
		`{"method":"put"}`:                   legate.ClassWrite,
		`{"method":"PATCH"}`:                 legate.ClassWrite,
		`{"method":"DELETE"}`:                legate.ClassDestructive,
		`{"method":"BREW"}`:                  legate.ClassWrite,
		`not json`:                           legate.ClassWrite,
		`{"method":1}`:                       legate.ClassWrite,
		`{"method":"GET","surprise":1}`:      legate.ClassWrite,
		`{"method":"GET","method":"DELETE"}`: legate.ClassDestructive,
	}
	for args, want := range tests {
		if got := tool.ClassOf(json.RawMessage(args)); got != want {
			t.Errorf("ClassOf(%s) = %s; want %s", args, got, want)
		}
	}
}

// rate_limit holds the instance's calls to its rate: a call whose turn
// comes after its deadline is refused at once, unsent, with the wait.
func TestCallRateLimited(t *testing.T) {
	rec := newRecorder(t, nil)
	c := build(t, rec.srv.URL, "rate_limit: {per_second: 0.05, burst: 1}") // one call per 20s
	if _, err := callTool(t, c, `{"path":"a"}`, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := callTool(t, c, `{"path":"b"}`, nil) // its deadline is 10s away
	ce := wantCode(t, err, legate.CodeRateLimited)
	if ce.RetryAfter < 15*time.Second || ce.RetryAfter > 20*time.Second {
		t.Errorf("RetryAfter %v; want about 20s", ce.RetryAfter)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refused after %v; want at once", d)
	}
	if n := len(rec.requests()); n != 1 {
		t.Errorf("the server saw %d requests; want 1", n)
	}
	// Another instance has its own limit.
	if _, err := callTool(t, build(t, rec.srv.URL, "rate_limit: {per_second: 0.05}"), `{"path":"c"}`, nil); err != nil {
		t.Errorf("a second instance shares the first one's limit: %v", err)
	}
}
