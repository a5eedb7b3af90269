package oauth_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	idpstorage "github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store/sqlite"
)

// TestUpstreamLogin: a person logs in through an OpenID Connect provider
// (zitadel's example OP, built on the same op package): Legate sends the
// browser there with PKCE and a state bound to it, takes the code back,
// checks the ID token, makes the person a user from its claims, asks
// consent and issues tokens naming them.
func TestUpstreamLogin(t *testing.T) {
	ctx := context.Background()
	// Legate's authorization server, its address known before it starts.
	legate := httptest.NewUnstartedServer(nil)
	issuer := "http://" + legate.Listener.Addr().String()
	// The identity provider, with Legate registered as a web client.
	idp := httptest.NewUnstartedServer(nil)
	idpIssuer := "http://" + idp.Listener.Addr().String()
	clients := map[string]*idpstorage.Client{"legate": idpstorage.WebClient("legate", "idp-secret", issuer+oauth.UpstreamCallbackPath)}
	idp.Config.Handler = exampleop.SetupServer(idpIssuer, idpstorage.NewStorageWithClients(idpstorage.NewUserStore(idpIssuer), clients), nil, false)
	idp.Start()
	t.Cleanup(idp.Close)

	t.Setenv("TEST_IDP_SECRET", "idp-secret")
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Auth{Resource: issuer + "/mcp", OAuthServer: &config.OAuthServer{Upstream: &config.UpstreamLogin{
		Name: "Test IdP", Issuer: idpIssuer, ClientID: "legate", ClientSecretEnv: "TEST_IDP_SECRET"}}}
	as, err := oauth.New(ctx, cfg, oauth.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	legate.Config.Handler = as.Handler()
	legate.Start()
	t.Cleanup(legate.Close)

	redirect := "http://127.0.0.1:33418/callback"
	h := &harness{t: t, srv: legate, as: as, st: st, issuer: issuer, resource: issuer + "/mcp", now: time.Now()}
	client := h.register(redirect)

	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host == "127.0.0.1:33418" {
			return http.ErrUseLastResponse // the client's callback: read the code off the redirect
		}
		return nil
	}}
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"st8"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
	resp, err := b.Get(issuer + oauth.AuthorizePath + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	page := readBody(resp)
	link := regexp.MustCompile(`href="(/oauth/upstream/start\?id=[^"]+)">Log in with Test IdP<`).FindStringSubmatch(page)
	if link == nil {
		t.Fatalf("the login page offers no upstream login:\n%s", page)
	}

	// A callback whose state this browser was not sent with is refused.
	resp, _ = b.Get(issuer + oauth.UpstreamCallbackPath + "?code=x&state=" + url.QueryEscape(strings.TrimPrefix(link[1], "/oauth/upstream/start?id=")+".forged"))
	if readBody(resp); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a forged state: %d, want 403", resp.StatusCode)
	}

	resp, err = b.Get(issuer + strings.ReplaceAll(link[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	page = readBody(resp)
	id := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(page)
	if id == nil || !strings.HasPrefix(resp.Request.URL.String(), idpIssuer) {
		t.Fatalf("not at the provider's login page (%s):\n%s", resp.Request.URL, page)
	}
	resp, err = b.PostForm(idpIssuer+"/login/username", url.Values{"id": {id[1]}, "username": {"test-user@127.0.0.1"}, "password": {"verysecure"}})
	if err != nil {
		t.Fatal(err)
	}
	page = readBody(resp)
	if !strings.Contains(page, "Allow") || !strings.Contains(page, "id1") {
		t.Fatalf("no consent page for id1 after the provider's login (%d %s):\n%s", resp.StatusCode, resp.Request.URL, page)
	}
	f := url.Values{"decision": {"allow"}}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		f.Set(m[1], m[2])
	}
	resp, err = b.PostForm(issuer+oauth.ConsentPath, f)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := resp.Location()
	if loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("consent: %d to %v", resp.StatusCode, loc)
	}
	status, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %+v", status, tr)
	}
	p, _, _, err := as.VerifyAccessToken(ctx, tr.AccessToken)
	if err != nil || p.Name != "id1" || p.Role != auth.RoleUser {
		t.Fatalf("the token names %+v (%v), want id1 as a user", p, err)
	}
	// The provider's user has no password here.
	u, err := st.Users().Get(ctx, "id1")
	if err != nil || oauth.CheckPassword(u.PasswordHash, "") || !strings.HasPrefix(u.PasswordHash, "!oidc ") {
		t.Fatalf("the provisioned user: %+v %v", u, err)
	}
}

func readBody(resp *http.Response) string {
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String()
		}
	}
}
