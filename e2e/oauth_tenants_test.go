package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	idpstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// idpPerson is a person of the test identity provider and the claims
// its ID tokens carry besides the subject.
type idpPerson struct {
	user   idpstorage.User
	claims map[string]any
}

// idpPeople is the provider's own user store.
type idpPeople map[string]idpPerson // by subject

func (p idpPeople) GetUserByID(id string) *idpstorage.User {
	if u, ok := p[id]; ok {
		return &u.user
	}
	return nil
}

func (p idpPeople) GetUserByUsername(name string) *idpstorage.User {
	for _, u := range p {
		if u.user.Username == name {
			return &u.user
		}
	}
	return nil
}

func (idpPeople) ExampleClientID() string { return idpstorage.ServiceUserID }

// claimsStorage is zitadel's example OP storage whose ID tokens also
// carry each person's claims (their name, organisation and groups), as a
// team's identity provider would.
type claimsStorage struct {
	*idpstorage.Storage
	people idpPeople
}

func (s claimsStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	for k, v := range s.people[req.GetSubject()].claims {
		ui.AppendClaims(k, v)
	}
	return nil
}

var _ op.CanSetUserinfoFromRequest = claimsStorage{}

// TestOAuthUpstreamTenants: people log in through the team's OpenID
// Connect provider (an OP on zitadel's op package with its own users,
// whose ID tokens name them in preferred_username, their tenant in a
// nested org.tenant and their role among their groups). Legate maps those
// claims as auth.oauth_server.upstream.claims says. Each person's client
// (the Go SDK's OAuth handler: discovery, registration, PKCE) runs the
// whole flow through Legate's login page, the provider's login and
// Legate's consent; then, through /mcp, ann of acme sees acme's tools and
// not beta's, ben of beta the reverse, and a call of another tenant's tool
// is refused. ann, an approver, reads the approval inbox; ben, a user, is
// refused it. The audit rows of their calls name each and their tenant.
func TestOAuthUpstreamTenants(t *testing.T) {
	need(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	issuer := fmt.Sprintf("http://127.0.0.1:%d", port)

	idp := httptest.NewUnstartedServer(nil)
	idpIssuer := "http://" + idp.Listener.Addr().String()
	people := idpPeople{
		"u-1001": {idpstorage.User{ID: "u-1001", Username: "ann@acme.example", Password: "ann's password"},
			map[string]any{"preferred_username": "ann", "org": map[string]any{"tenant": "acme"}, "groups": []any{"staff", "approver"}}},
		"u-2002": {idpstorage.User{ID: "u-2002", Username: "ben@beta.example", Password: "ben's password"},
			map[string]any{"preferred_username": "ben", "org": map[string]any{"tenant": "beta"}, "groups": []any{"staff"}}},
	}
	clients := map[string]*idpstorage.Client{"legate": idpstorage.WebClient("legate", "idp-secret", issuer+"/oauth/upstream/callback")}
	idp.Config.Handler = exampleop.SetupServer(idpIssuer, claimsStorage{idpstorage.NewStorageWithClients(people, clients), people}, nil, false)
	idp.Start()
	t.Cleanup(idp.Close)

	// What the tenants' http connectors reach.
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the backend") }))
	t.Cleanup(backend.Close)

	state := t.TempDir()
	config := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`auth:
  resource: %[1]s/mcp
  oauth_server:
    upstream:
      name: Test IdP
      issuer: %[2]s
      client_id: legate
      client_secret_env: TEST_IDP_SECRET
      claims: {principal: preferred_username, tenant: org.tenant, role: groups}
connectors:
  - {id: acme-web, type: http, tenant: acme, config: {base_url: %[3]q, allow_private_networks: true}}
  - {id: beta-web, type: http, tenant: beta, config: {base_url: %[3]q, allow_private_networks: true}}
policy:
  defaults: {write: allow}
`, issuer, idpIssuer, backend.URL)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := startServeAt(t, config, state, []string{"TEST_IDP_SECRET=idp-secret"}, port)
	if err != nil {
		t.Fatal(err)
	}

	type person struct {
		name, tenant, username, password, own, other string
		inbox                                        int
	}
	for _, p := range []person{
		{"ann", "acme", "ann@acme.example", "ann's password", "acme-web__call", "beta-web__call", http.StatusOK},
		{"ben", "beta", "ben@beta.example", "ben's password", "beta-web__call", "acme-web__call", http.StatusForbidden},
	} {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			oauth := oauthHandler(t, "http://127.0.0.1:1/callback", "none", func(b *http.Client, authURL string) error {
				return ssoBrowser(b, authURL, idpIssuer, p.username, p.password)
			})
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "sso-" + p.name, Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), OAuthHandler: oauth}, nil)
			if err != nil {
				t.Fatalf("connecting as %s through the OAuth flow: %v", p.name, err)
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, p.own) || slices.Contains(names, p.other) {
				t.Fatalf("%s of %s lists %v: want %s and not %s", p.name, p.tenant, names, p.own, p.other)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: p.own, Arguments: map[string]any{"method": "GET", "path": "/"}})
			if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent, textOf(res)), "hello from the backend") {
				t.Fatalf("%s calls %s: %+v %v", p.name, p.own, res, err)
			}
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: p.other, Arguments: map[string]any{"method": "GET", "path": "/"}}); err == nil && !res.IsError {
				t.Fatalf("%s of %s called %s: %+v", p.name, p.tenant, p.other, res)
			}

			// The role the groups claim gave: only an approver reads the inbox.
			ts, err := oauth.TokenSource(ctx)
			if err != nil || ts == nil {
				t.Fatalf("no token source after the flow: %v", err)
			}
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/admin/v1/approvals", nil)
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != p.inbox {
				t.Fatalf("%s reads the approval inbox: %s %s, want %d", p.name, resp.Status, body, p.inbox)
			}

			var rows []map[string]any
			waitFor(t, 10*time.Second, func() bool {
				out, err := legateExec(t, nil, "audit", "query", "--principal", p.name, "-o", "json", "--state-dir", state, "--config", config)
				if err != nil {
					return false
				}
				if json.Unmarshal(out, &rows) != nil {
					return false
				}
				return slices.ContainsFunc(rows, func(r map[string]any) bool {
					return field(r, "tool") == strings.ReplaceAll(p.own, "__", ".") && field(r, "tenant") == p.tenant
				})
			}, fmt.Sprintf("the audit row of %s's call of %s names %s of %s", p.name, p.own, p.name, p.tenant))
		})
	}
	users, err := legateExec(t, nil, "user", "list", "--state-dir", state, "--config", config)
	if err != nil || !regexp.MustCompile(`(?m)^ann\s+acme\s+approver\s`).Match(users) || !regexp.MustCompile(`(?m)^ben\s+beta\s+user\s`).Match(users) {
		t.Fatalf("legate user list: %v\n%s", err, users)
	}
}

// textOf joins a result's text content.
func textOf(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// oauthHandler is the Go SDK's OAuth handler, registering itself
// dynamically with the redirect URI redirect and the token endpoint auth
// method (none: a public client; client_secret_post or _basic: it gets a
// secret and sends it from where it runs). Its browser stops at the
// redirect to the client, reading the code off it; login drives the
// browser from the authorization URL through login and consent.
func oauthHandler(t *testing.T, redirect, method string, login func(b *http.Client, authURL string) error) *auth.AuthorizationCodeHandler {
	t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "OAuth test client", RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: method,
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			var result *auth.AuthorizationResult
			jar, _ := cookiejar.New(nil)
			b := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
				if strings.HasPrefix(req.URL.String(), redirect) {
					q := req.URL.Query()
					result = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
					return http.ErrUseLastResponse
				}
				return nil
			}}
			err := login(b, args.URL)
			if result == nil || result.Code == "" {
				return nil, fmt.Errorf("no redirect to %s with a code: %v", redirect, err)
			}
			return result, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// ssoBrowser plays the person's browser: Legate's login page, its
// "Log in with Test IdP" link, the provider's login form, Legate's consent
// page, whose allow redirects to the client.
func ssoBrowser(b *http.Client, authURL, idpIssuer, username, password string) error {
	page := func(resp *http.Response, err error) (string, error) {
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s: %s\n%s", resp.Request.URL, resp.Status, body)
		}
		return string(body), nil
	}
	u, _ := url.Parse(authURL)
	origin := u.Scheme + "://" + u.Host
	login, err := page(b.Get(authURL))
	if err != nil {
		return err
	}
	link := regexp.MustCompile(`href="(/oauth/upstream/start\?id=[^"]+)">Log in with Test IdP<`).FindStringSubmatch(login)
	if link == nil {
		return fmt.Errorf("Legate's login page offers no login with Test IdP:\n%s", login)
	}
	idpLogin, err := page(b.Get(origin + strings.ReplaceAll(link[1], "&amp;", "&")))
	if err != nil {
		return err
	}
	id := regexp.MustCompile(`name="id" value="([^"]+)"`).FindStringSubmatch(idpLogin)
	if id == nil {
		return fmt.Errorf("not the provider's login page:\n%s", idpLogin)
	}
	consent, err := page(b.PostForm(idpIssuer+"/login/username", url.Values{"id": {id[1]}, "username": {username}, "password": {password}}))
	if err != nil {
		return err
	}
	if !strings.Contains(consent, "Allow") {
		return fmt.Errorf("no consent page after the provider's login:\n%s", consent)
	}
	f := url.Values{"decision": {"allow"}}
	for _, m := range regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`).FindAllStringSubmatch(consent, -1) {
		f.Set(m[1], m[2])
	}
	_, err = page(b.PostForm(origin+"/oauth/consent", f))
	return err
}
