package email_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/oauth2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	email "github.com/legate-mcp/legate/connectors/email"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

const (
	oauthClientID = "mail-client"
	oauthSecret   = "oauth-secret-canary-7d41"
)

// withOAuth gives the stand-in's IMAP and SMTP servers an OAuth stand-in
// whose access tokens they take, and returns its base URL.
func (s *standin) withOAuth(t testing.TB) string {
	t.Helper()
	s.oauth = oauthtest.New(oauthClientID, oauthSecret, "at-")
	s.oauth.KeepRefresh = true // as Google does
	return oauthtest.Serve(t, s.oauth)
}

// grant runs the stand-in's consent for account, as a person would, and
// returns the tokens it issues.
func grant(t testing.TB, base, account string) *oauth2.Token {
	t.Helper()
	conf := &oauth2.Config{ClientID: oauthClientID, ClientSecret: oauthSecret, RedirectURL: "http://127.0.0.1/callback",
		Endpoint: oauth2.Endpoint{AuthURL: base + "/oauth/authorize", TokenURL: base + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("user", account)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %s, Location %q", res.Status, res.Header.Get("Location"))
	}
	tok, err := conf.Exchange(context.Background(), loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The instance signs in to IMAP and SMTP with an access token it gets
// from a shared refresh token at the token endpoint, over XOAUTH2 and
// OAUTHBEARER alike; the token is held, refreshed once when refused, and
// a refused refresh is AUTH_EXPIRED saying to reconnect.
func TestSharedRefreshTokenSignsIn(t *testing.T) {
	for _, mech := range []string{"xoauth2", "oauthbearer"} {
		t.Run(mech, func(t *testing.T) {
			s := newStandin(t)
			base := s.withOAuth(t)
			seedInbox(t, s, 3)
			tok := grant(t, base, "ann-account")
			in := build(t, s, "email", fmt.Sprintf("auth: %s\noauth_client_id: %s\noauth_url: %s/oauth/token", mech, oauthClientID, base))
			in.creds = map[string]string{"oauth_refresh_token": tok.RefreshToken, "oauth_client_secret": oauthSecret}
			refreshes := s.oauth.Refreshes()

			res, err := in.call(t, "t1", "search", `{}`, "")
			if l := must[saas.List[model.Message]](t, res, err); len(l.Items) != 3 {
				t.Fatalf("%d messages", len(l.Items))
			}
			res, err = in.call(t, "t1", "send", sendArgs, "op-1")
			if out := must[email.Sent](t, res, err); out.Delivery != "accepted" || len(s.delivered()) != 1 {
				t.Fatalf("%+v", out)
			}
			calls := s.oauth.Calls()
			if len(calls) < 2 || s.oauth.Refreshes() != refreshes+1 {
				t.Fatalf("%d sign-ins, %d refreshes", len(calls), s.oauth.Refreshes()-refreshes)
			}
			for _, c := range calls {
				if c.User != "ann-account" || c.Token == tok.AccessToken {
					t.Fatalf("signed in as %q with %q", c.User, c.Token)
				}
			}

			// An access token the servers refuse is refreshed once.
			s.oauth.Expire("ann-account")
			in.c.(interface{ Close() error }).Close() // no pooled session: the next call signs in again
			if _, err := in.call(t, "t1", "send", sendArgs, "op-2"); err != nil {
				t.Fatal(err)
			}
			if s.oauth.Refreshes() != refreshes+2 || len(s.delivered()) != 2 {
				t.Fatalf("%d refreshes, %d deliveries", s.oauth.Refreshes()-refreshes, len(s.delivered()))
			}

			// A refresh token the provider refuses: reconnect.
			s.oauth.Expire("ann-account")
			s.oauth.FailRefresh(true)
			in.c.(interface{ Close() error }).Close()
			res, err = in.call(t, "t1", "search", `{}`, "")
			le := wantCode(t, err, legate.CodeAuthExpired)
			if !strings.Contains(le.Message, "reconnect") {
				t.Errorf("message %q", le.Message)
			}
			noSecret(t, texts(res, err)...)
			for _, txt := range texts(res, err) {
				if strings.Contains(txt, tok.RefreshToken) || strings.Contains(txt, oauthSecret) {
					t.Fatalf("a credential shows in %q", txt)
				}
			}
		})
	}
}

// An access token given as is signs in; refused, it is AUTH_EXPIRED
// naming what to do.
func TestAccessTokenSignsIn(t *testing.T) {
	s := newStandin(t)
	base := s.withOAuth(t)
	seedInbox(t, s, 2)
	tok := grant(t, base, "ann-account")
	in := build(t, s, "email", "auth: xoauth2")
	in.creds = map[string]string{"oauth_access_token": tok.AccessToken}
	res, err := in.call(t, "t1", "search", `{}`, "")
	if l := must[saas.List[model.Message]](t, res, err); len(l.Items) != 2 {
		t.Fatalf("%d messages", len(l.Items))
	}
	if _, err := in.call(t, "t1", "send", sendArgs, "op-1"); err != nil || len(s.delivered()) != 1 {
		t.Fatalf("%v; %d deliveries", err, len(s.delivered()))
	}
	// The connection test signs in with the token too.
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	if err := in.c.Test(ctx, in.creds); err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "imap: logged in") || !strings.Contains(all, "smtp: AUTH XOAUTH2 as "+user+": ok") {
		t.Errorf("report:\n%s", all)
	}
	s.oauth.Expire("ann-account")
	in.c.(interface{ Close() error }).Close()
	for _, tool := range []string{"search", "send"} {
		args := `{}`
		if tool == "send" {
			args = sendArgs
		}
		res, err := in.call(t, "t1", tool, args, "op-2")
		le := wantCode(t, err, legate.CodeAuthExpired)
		if !strings.Contains(le.Message, "refused the OAuth access token") || !strings.Contains(le.Message, "reconnect") {
			t.Errorf("%s: %q", tool, le.Message)
		}
		for _, txt := range texts(res, err) {
			if strings.Contains(txt, tok.AccessToken) {
				t.Fatalf("the token shows in %q", txt)
			}
		}
	}
	if len(s.delivered()) != 1 {
		t.Fatalf("%d deliveries", len(s.delivered()))
	}
}

// A token endpoint that fails (5xx) is TRANSIENT, tried again as the
// call's attempts allow; one that answers no token is a mapping error.
func TestTokenEndpointFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
		want   legate.Code
	}{
		"5xx":      {http.StatusBadGateway, `{"error":"x"}`, legate.CodeTransient},
		"no token": {http.StatusOK, `{"token_type":"Bearer"}`, legate.CodeAdapterMapping},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			in := build(t, s, "email", "auth: xoauth2\noauth_client_id: "+oauthClientID+"\noauth_url: "+srv.URL+"/token\nmax_attempts: 2")
			in.creds = map[string]string{"oauth_refresh_token": "refresh-canary-1", "oauth_client_secret": oauthSecret}
			res, err := in.call(t, "t1", "search", `{}`, "")
			wantCode(t, err, tc.want)
			if tc.want == legate.CodeTransient && hits.Load() != 2 {
				t.Errorf("%d tries of the token endpoint, want 2", hits.Load())
			}
			for _, txt := range texts(res, err) {
				if strings.Contains(txt, "refresh-canary-1") || strings.Contains(txt, oauthSecret) {
					t.Fatalf("a credential shows in %q", txt)
				}
			}
		})
	}
}
