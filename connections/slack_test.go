package connections_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

// For slack, the instance's scopes are asked as the person's user_scope,
// and the connection keeps the person's token that oauth.v2.access
// answers under authed_user, never the bot's at the top.
func TestSlackConnectionKeepsThePersonsToken(t *testing.T) {
	e := newEnv(t)
	mux := http.NewServeMux()
	e.provider.Mount(func(pat string, h http.HandlerFunc) {
		if strings.HasSuffix(pat, "/token") {
			h = slackShaped(h)
		}
		mux.Handle(pat, h)
	}, "/oauth")
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	app := *e.def.OAuth
	app.AuthorizeURL, app.TokenURL, app.Scopes = srv.URL+"/oauth/authorize", srv.URL+"/oauth/token", []string{"chat:write", "search:read"}
	e.def.OAuth = &app

	status, _, consent := e.browse(t, oauthtest.NewBrowser("a"), "alice")
	u, _ := url.Parse(consent)
	if q := u.Query(); q.Get("user_scope") != "chat:write,search:read" || q.Has("scope") {
		t.Fatalf("consent asked scope=%q user_scope=%q; want the user scopes alone", q.Get("scope"), q.Get("user_scope"))
	}
	if status != http.StatusOK {
		t.Fatalf("connect: %d", status)
	}
	tok, err := e.get("alice")
	if who, ok := e.provider.User(tok); err != nil || !ok || who != "a" || tok == "xoxb-bot" {
		t.Fatalf("the connection keeps %q (%v): want the person's token", tok, err)
	}
}

// slackShaped answers a code exchange as Slack does: the bot's token at
// the top, the person's under authed_user.
func slackShaped(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h(rec, r)
		var body map[string]any
		if r.PostFormValue("grant_type") != "authorization_code" || rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		user := map[string]any{"id": "U1", "token_type": "user", "access_token": body["access_token"], "refresh_token": body["refresh_token"], "expires_in": body["expires_in"]}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"ok": true, "access_token": "xoxb-bot", "token_type": "bot", "authed_user": user})
	}
}
