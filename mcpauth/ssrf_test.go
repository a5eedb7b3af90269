package mcpauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/mcpauth"
)

// metadataStandin serves, for t, an OAuth-protected MCP upstream whose
// metadata names elsewhere (another loopback port, which the operator did
// not allow) for the endpoint of where: "resource metadata" (the 401's
// resource_metadata), "authorization server" (the protected resource
// metadata's authorization_servers), "registration" or "token" (the
// authorization server's metadata). Its other endpoints are its own; its
// authorize endpoint approves at once. It returns the MCP URL.
func metadataStandin(t *testing.T, where, elsewhere string) string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	at := func(name, own string) string {
		if name == where {
			return elsewhere + own
		}
		return srv.URL + own
	}
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+at("resource metadata", "/.well-known/oauth-protected-resource/mcp")+`"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{at("authorization server", "")}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/authorize", "token_endpoint": at("token", "/token"),
			"registration_endpoint": at("registration", "/register"), "response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "registered", "redirect_uris": []string{"http://x/connect/callback"}})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=granted&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	return srv.URL + "/mcp"
}

// An upstream configured on loopback may be reached, but an endpoint its
// metadata names on another loopback port is not: no connection reaches
// it (the counting listener accepts none), and the connection fails
// naming the address refused.
func TestMetadataCannotReachAnotherAddress(t *testing.T) {
	for _, where := range []string{"resource metadata", "authorization server", "registration", "token"} {
		t.Run(where, func(t *testing.T) {
			l := connectortest.NewListener(t)
			e := newEnvWith(t, metadataStandin(t, where, "http://"+l.Addr()), mcpauth.Upstream{})
			rec := httptest.NewRecorder()
			u, err := e.m.Begin(rec, httptest.NewRequest("POST", e.srv.URL+"/connect/secure", nil), "secure", "", "alice")
			if where != "token" {
				if err == nil || !strings.Contains(err.Error(), l.Addr()) || !strings.Contains(err.Error(), "refused to connect to 127.0.0.1") {
					t.Errorf("Begin: %v; want a refusal naming %s", err, l.Addr())
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				b := oauthtest.NewBrowser("alice") // the browser that started the consent
				base, _ := url.Parse(e.srv.URL)
				b.Client.Jar.SetCookies(base, rec.Result().Cookies())
				res, err := b.Client.Get(u) // the consent, whose code is exchanged at the token endpoint
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK || !strings.Contains(string(body), l.Addr()) || !strings.Contains(string(body), "refused to connect to 127.0.0.1") {
					t.Errorf("the consent ended %s: %s; want a refusal naming %s", res.Status, body, l.Addr())
				}
			}
			if n := l.Connections(t); n != 0 {
				t.Errorf("%d connection(s) reached the address the metadata named; want 0", n)
			}
		})
	}
}
