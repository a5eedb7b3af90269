package connections_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	_ "github.com/legate-mcp/legate/connectors/slack"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

type env struct {
	m        *connections.Manager
	provider *oauthtest.Provider
	def      sources.InstanceDef
	now      time.Time
	srv      *httptest.Server
	vault    *vault.Vault
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{provider: oauthtest.New("c", "s", "tok-"), now: time.Now()}
	op := oauthtest.Serve(t, e.provider)
	t.Setenv("CONN_TEST_SECRET", "s")
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v := vault.New(st.Secrets(), vault.SourceFromEnv(func(string) string { return "" }, t.TempDir()), nil)
	c := config.Connector{ID: "slack", Type: "slack", CredentialsMode: config.CredentialsPerUser, OAuth: &config.ConnectorOAuth{
		ClientID: "c", ClientSecret: &vault.Ref{Env: "CONN_TEST_SECRET"}, AuthorizeURL: op + "/oauth/authorize", TokenURL: op + "/oauth/token",
	}}
	e.vault = v
	e.def = sources.InstanceDef{ID: "slack", Type: "slack", Mode: c.CredentialsMode, OAuth: c.OAuthApp()}
	key := make([]byte, 32)
	e.m = connections.New(connections.Options{Vault: v, Instances: func() []sources.InstanceDef { return []sources.InstanceDef{e.def} },
		Key: func(context.Context) []byte { return key }, Now: func() time.Time { return e.now }})
	e.srv = httptest.NewServer(e.m.Handler(nil))
	t.Cleanup(e.srv.Close)
	return e
}

// connect runs the flow for principal in a browser of its own, from
// the link Legate gives, approving as account; it returns the last
// page's status.
func (e *env) connect(t *testing.T, principal, account string) int {
	t.Helper()
	status, _, _ := e.browse(t, oauthtest.NewBrowser(account), principal)
	return status
}

// browse runs the flow for principal in b: it opens the link, goes on
// and follows the consent; it returns the last page's status and body,
// and the consent URL.
func (e *env) browse(t *testing.T, b *oauthtest.Browser, principal string) (int, string, string) {
	t.Helper()
	consent, err := b.Start(e.link(t, principal))
	if err != nil {
		t.Fatal(err)
	}
	status, body, _, err := b.Follow(consent)
	if err != nil {
		t.Fatal(err)
	}
	return status, body, consent
}

// link is the link that connects principal of acme to slack.
func (e *env) link(t *testing.T, principal string) string {
	t.Helper()
	u, err := e.m.LinkURL(context.Background(), "slack", "acme", principal, e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *env) get(principal string) (string, error) {
	creds := e.m.Credentials(e.def, sources.Credentials{}, connectors.Caller{Principal: principal, Tenant: "acme"})
	return creds.Get(context.Background(), e.def.PerUserCredential())
}

func TestTokenIsRefreshedBeforeItExpires(t *testing.T) {
	e := newEnv(t)
	if status := e.connect(t, "alice", "a"); status != 200 {
		t.Fatalf("connect: %d", status)
	}
	first, err := e.get("alice")
	if who, ok := e.provider.User(first); err != nil || !ok || who != "a" {
		t.Fatalf("alice's token: %v %q", err, who)
	}
	// Within RefreshMargin of its expiry (3600s), the token is refreshed.
	e.now = e.now.Add(time.Hour - connections.RefreshMargin/2)
	second, err := e.get("alice")
	if err != nil || second == first || e.provider.Refreshes() != 1 {
		t.Fatalf("near expiry: %v, same token %v, %d refreshes", err, second == first, e.provider.Refreshes())
	}
	if again, _ := e.get("alice"); again != second || e.provider.Refreshes() != 1 {
		t.Fatalf("the refreshed token was not kept: %d refreshes", e.provider.Refreshes())
	}
	// The refresh replaced the connection's tokens: the vault keeps no
	// older version of them.
	list, err := e.vault.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var versions []int
	for _, in := range list {
		if strings.HasPrefix(in.Name, connections.Prefix) {
			versions = append(versions, in.Version)
		}
	}
	if len(versions) != 1 || versions[0] != 2 {
		t.Errorf("the vault holds versions %v of alice's connection, want only 2", versions)
	}
	// Another principal has nothing of alice's.
	if _, err := e.get("bob"); legate.CodeOf(err) != legate.CodeNotConnected {
		t.Fatalf("bob: %v", err)
	}
}

func TestStateIsSealedAndExpires(t *testing.T) {
	e := newEnv(t)
	b := oauthtest.NewBrowser("a")
	u, err := b.Start(e.link(t, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	st := pu.Query().Get("state")
	if strings.Contains(st, "alice") || pu.Query().Get("code_challenge") == "" {
		t.Fatalf("the state is readable or PKCE is missing: %s", u)
	}
	for name, state := range map[string]string{"tampered": st[:len(st)-2] + "AA", "made up": "eyJpIjoic2xhY2sifQ"} {
		res, err := b.Client.Get(e.srv.URL + connections.CallbackPath + "?code=x&state=" + url.QueryEscape(state))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s state: %d", name, res.StatusCode)
		}
	}
	// A consent slower than StateTTL is refused.
	e.now = e.now.Add(connections.StateTTL + time.Second)
	if status, _, _, err := b.Follow(u); err != nil || status != http.StatusBadRequest || e.m.Connected(context.Background(), "acme", "alice", "slack") {
		t.Fatalf("an expired state: %d %v", status, err)
	}
}

// A connection is a vault secret, but no credential reference reaches it:
// an instance someone else configures cannot read a person's tokens.
func TestNoCredentialReferenceReadsAConnection(t *testing.T) {
	e := newEnv(t)
	if status := e.connect(t, "alice", "a"); status != 200 {
		t.Fatalf("connect: %d", status)
	}
	name := connections.SecretName("slack", "alice")
	if _, _, err := e.vault.Get(context.Background(), "acme", name); err != nil {
		t.Fatalf("the connection is not where it should be: %v", err)
	}
	v, err := (&vault.Resolver{Vault: e.vault}).Resolve(context.Background(), "acme", vault.Ref{Vault: name})
	if err == nil || v != "" {
		t.Fatalf("a credential reference read alice's connection")
	}
	_, err = config.Parse([]byte("connectors:\n  - {type: slack, credentials: {bot_token: {vault: "+name+"}}}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "connectors[0].credentials.bot_token") {
		t.Fatalf("config referencing a connection: %v", err)
	}
}
