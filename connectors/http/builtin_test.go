package httpconn_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	httpconn "github.com/legate-mcp/legate/connectors/http"
)

func TestBuiltinSpec(t *testing.T) {
	tool := httpconn.Builtin()
	if err := connectors.CheckTools([]connectors.Tool{tool}); err != nil {
		t.Fatal(err)
	}
	if tool.Name != "request" || tool.Class != legate.ClassRead {
		t.Errorf("tool %s of class %s; want request, read", tool.Name, tool.Class)
	}
	var schema struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || len(schema.Required) != 1 || schema.Required[0] != "url" {
		t.Errorf("schema %s: url must be the one required argument", tool.InputSchema)
	}
}

func TestBuiltinGet(t *testing.T) {
	httpconn.AllowPrivateInBuiltin(t)
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, strings.Repeat("a", httpconn.BuiltinMaxResponseBytes+10))
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		default:
			io.WriteString(w, "<p>hello</p>")
		}
	})
	tool := httpconn.Builtin()
	resp, err := runTool(t, tool, `{"url":"`+rec.srv.URL+`/page?q=1#section","headers":{"Accept":"text/html"}}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rec.last(t)
	if got.Method != "GET" || got.Path != "/page" || got.Query != "q=1" || got.Header.Get("Accept") != "text/html" {
		t.Errorf("server saw %+v", got)
	}
	if got.Header.Get("Authorization") != "" {
		t.Error("the built-in tool sent credentials")
	}
	if resp.Status != 200 || resp.Body != "<p>hello</p>" {
		t.Errorf("response %+v", resp)
	}

	resp, err = runTool(t, tool, `{"url":"`+rec.srv.URL+`/big"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || resp.Size != httpconn.BuiltinMaxResponseBytes {
		t.Errorf("big response: truncated %v, size %d", resp.Truncated, resp.Size)
	}

	_, err = runTool(t, tool, `{"url":"`+rec.srv.URL+`/missing"}`, nil)
	wantCode(t, err, legate.CodeNotFound)
}

func TestBuiltinRefusals(t *testing.T) {
	httpconn.AllowPrivateInBuiltin(t)
	rec := newRecorder(t, nil)
	tool := httpconn.Builtin()
	tests := map[string]string{
		"no url":               `{}`,
		"relative url":         `{"url":"/etc/passwd"}`,
		"file url":             `{"url":"file:///etc/passwd"}`,
		"no host":              `{"url":"http:///x"}`,
		"user info":            `{"url":"http://u:p@example.com/"}`,
		"authorization header": `{"url":"` + rec.srv.URL + `","headers":{"Authorization":"Bearer x"}}`,
		"host header":          `{"url":"` + rec.srv.URL + `","headers":{"Host":"x"}}`,
		"method argument":      `{"url":"` + rec.srv.URL + `","method":"POST"}`,
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runTool(t, tool, args, nil)
			wantCode(t, err, legate.CodeInvalidArgument)
		})
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("the server saw %d request(s); want 0", n)
	}
}

func TestBuiltinRefusesPrivateNetworks(t *testing.T) {
	l := connectortest.NewListener(t)
	addr := l.Addr()
	tool := httpconn.Builtin() // no test hook: private networks refused
	tests := map[string]string{
		"loopback":        "http://" + addr + "/",
		"localhost":       "http://localhost:" + addr[strings.LastIndex(addr, ":")+1:] + "/",
		"metadata":        "http://169.254.169.254/latest/meta-data/",
		"mapped metadata": "http://[::ffff:169.254.169.254]/",
		"private":         "http://10.0.0.1/",
		"ula":             "http://[fd00::1]/",
		"cgnat":           "http://100.64.0.1/",
		"unspecified":     "http://0.0.0.0:" + addr[strings.LastIndex(addr, ":")+1:] + "/",
	}
	for name, u := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runTool(t, tool, `{"url":"`+u+`"}`, nil)
			ce := wantCode(t, err, legate.CodePermissionDenied)
			// The built-in tool has no settings: the message points to an
			// http connector instance, not to a setting it cannot have.
			for _, want := range []string{"built-in http.request tool never reaches them", "configure an http connector instance", "allow_private_networks: true", "--type http"} {
				if !strings.Contains(ce.Message, want) {
					t.Errorf("message %q lacks %q", ce.Message, want)
				}
			}
			if strings.Contains(ce.Message, "on the connector to allow") {
				t.Errorf("message %q tells to set a setting of the built-in tool", ce.Message)
			}
		})
	}
	if n := l.Connections(t); n != 0 {
		t.Fatalf("listener accepted %d connection(s); want 0", n)
	}
}

// TestBuiltinFollowsRedirects: redirects are followed through the same
// guarded client (netguard's tests show a redirect to a blocked address is
// refused).
func TestBuiltinFollowsRedirects(t *testing.T) {
	httpconn.AllowPrivateInBuiltin(t)
	target := newRecorder(t, nil)
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.srv.URL+"/landed", http.StatusFound)
	})
	resp, err := runTool(t, httpconn.Builtin(), `{"url":"`+rec.srv.URL+`"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || target.last(t).Path != "/landed" {
		t.Errorf("redirect not followed: %+v", resp)
	}
}
