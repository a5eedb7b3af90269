// Package mcpauth runs the MCP authorization flow for OAuth-protected
// upstream MCP servers, as a client, on behalf of each principal.
//
// An upstream with `auth: oauth` answers an unauthenticated request with
// 401 and `WWW-Authenticate: Bearer resource_metadata=URL`. [Apps.App]
// discovers the rest once per upstream: the protected resource metadata
// (RFC 9728: at resource_metadata, else at the upstream origin's
// well-known path), the authorization server's metadata (RFC 8414, or
// OpenID discovery), then registers Legate as a client (RFC 7591: a
// public client, token_endpoint_auth_method none, whose redirect URI is
// Legate's /connect/callback) unless the upstream configures its client
// (oauth.client_id). The result is a connections.UpstreamApp: package
// connections runs the consent flow (PKCE S256, the resource indicator
// of RFC 8707 on the authorization request and the code exchange) and
// keeps each principal's tokens in the vault, as for a connector
// instance.
//
// At each request to the upstream, [Transport] sets Authorization to the
// calling principal's own access token, read from the request's context
// ([WithCaller]); a request with no caller, or whose caller has not
// connected, is not sent: it fails with NOT_CONNECTED naming the connect
// URL.
//
// Every request of the flow goes through netguard: the upstream's own
// host and port (its url, the operator's choice) may be on a private
// network or loopback; every other address the metadata names (the
// authorization server, its registration and token endpoints) must be
// public, so that an upstream's answers cannot make Legate reach its
// own network.
package mcpauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// Upstream is what the flow needs of an upstream's configuration.
type Upstream struct {
	ID, URL, Tenant string
	// ClientID, when set, is the configured client (no registration);
	// ClientSecret its secret ("" for a public client).
	ClientID, ClientSecret string
	// Scopes asked for (default: the resource's scopes_supported).
	Scopes []string
	// Err is what keeps the upstream from being connected (its
	// configured client's secret cannot be read).
	Err error
}

// Apps discovers and registers the OAuth clients of upstreams; it is safe
// for concurrent use. Discovery and registrations are kept in memory (a
// new process discovers and registers again at its first connection);
// each connection keeps the client it was made with, which refreshes it.
type Apps struct {
	// Upstream looks up an upstream with auth: oauth by id.
	Upstream func(id string) (Upstream, bool)
	// ClientName is the client_name registered.
	ClientName string

	mu    sync.Mutex
	known map[string]*known // by upstream id
}

// known is what was discovered of one upstream; its lock is held while
// discovering and registering, so that one slow upstream holds back
// only its own connections.
type known struct {
	mu       sync.Mutex
	url      string
	hc       *http.Client // the flow's requests: netguard, the upstream's own host allowed
	resource string
	meta     *oauthex.AuthServerMeta
	scopes   []string
	clients  map[string]oauth2.Config // registered, by redirect URI
}

// App is the OAuth client of upstream id with redirect as its callback
// ("" for a refresh: a registered client is the connection's own); ok is false for an id
// that is not an upstream with auth: oauth. It has the signature of
// connections.Options.Upstreams.
func (a *Apps) App(ctx context.Context, id, redirect string) (*connections.UpstreamApp, bool, error) {
	up, ok := a.Upstream(id)
	if !ok {
		return nil, false, nil
	}
	if up.Err != nil {
		return nil, true, fmt.Errorf("upstream %s: %w", id, up.Err)
	}
	a.mu.Lock()
	if a.known == nil {
		a.known = map[string]*known{}
	}
	k := a.known[id]
	if k == nil {
		k = &known{}
		a.known[id] = k
	}
	a.mu.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.meta == nil || k.url != up.URL {
		hc, err := a.guarded(up.URL)
		if err != nil {
			return nil, true, fmt.Errorf("upstream %s: %w", id, err)
		}
		if err := a.discover(ctx, up, k, hc); err != nil {
			return nil, true, fmt.Errorf("upstream %s: OAuth discovery: %w", id, err)
		}
	}
	cfg, err := a.client(ctx, up, k, redirect)
	if err != nil {
		return nil, true, fmt.Errorf("upstream %s: %w", id, err)
	}
	return &connections.UpstreamApp{Tenant: up.Tenant, Config: cfg, Params: map[string]string{"resource": k.resource}, Registered: up.ClientID == "", HTTPClient: k.hc}, true, nil
}

// guarded is the HTTP client of the flow of the upstream at target:
// netguard, with target's own host and port allowed on a private
// network or loopback, and no other.
func (a *Apps) guarded(target string) (*http.Client, error) {
	own, err := netguard.HostPort(target)
	if err != nil {
		return nil, fmt.Errorf("its url: %w", err)
	}
	return netguard.NewClient(netguard.Options{Timeout: 30 * time.Second, Allow: []string{own},
		Hint: "an OAuth-protected upstream's metadata may name a private or loopback address only at the upstream's own host and port (" + own + ")"}), nil
}

// discover finds the upstream's protected resource metadata and its
// authorization server's metadata, into k (whose registrations it
// forgets).
func (a *Apps) discover(ctx context.Context, up Upstream, k *known, hc *http.Client) error {
	metaURL, err := a.challenge(ctx, hc, up.URL)
	if err != nil {
		return err
	}
	if metaURL == "" { // RFC 9728 section 3: the well-known URL of the resource
		u, _ := url.Parse(up.URL)
		path := strings.TrimSuffix(u.Path, "/")
		u.Path, u.RawQuery = "/.well-known/oauth-protected-resource"+path, ""
		metaURL = u.String()
	}
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, metaURL, up.URL, hc)
	if err != nil {
		return err
	}
	if len(prm.AuthorizationServers) == 0 {
		return fmt.Errorf("the protected resource metadata at %s names no authorization server", metaURL)
	}
	issuer := prm.AuthorizationServers[0]
	meta, err := auth.GetAuthServerMetadata(ctx, issuer, hc)
	if err != nil {
		return err
	}
	if meta == nil {
		return fmt.Errorf("the authorization server %s publishes no metadata (RFC 8414)", issuer)
	}
	if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return fmt.Errorf("the authorization server %s has no authorization or token endpoint", issuer)
	}
	if len(meta.CodeChallengeMethodsSupported) > 0 && !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("the authorization server %s does not support PKCE with S256", issuer)
	}
	scopes := up.Scopes
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	k.url, k.hc, k.resource, k.meta, k.scopes, k.clients = up.URL, hc, prm.Resource, meta, scopes, map[string]oauth2.Config{}
	return nil
}

// challenge makes an unauthenticated request to the upstream and returns
// the resource_metadata URL of its 401 ("" when the 401 names none).
func (a *Apps) challenge(ctx context.Context, hc *http.Client, target string) (string, error) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legate","version":"0"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		return "", fmt.Errorf("%s answered %s without a token, not 401: it is not an OAuth-protected MCP server", target, res.Status)
	}
	challenges, err := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate"))
	if err != nil {
		return "", fmt.Errorf("%s: its WWW-Authenticate: %w", target, err)
	}
	for _, c := range challenges {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["resource_metadata"] != "" {
			return c.Params["resource_metadata"], nil
		}
	}
	return "", nil
}

// client is the configured client, or the one registered for redirect
// (registered now if need be).
func (a *Apps) client(ctx context.Context, up Upstream, k *known, redirect string) (oauth2.Config, error) {
	cfg := oauth2.Config{Scopes: k.scopes, Endpoint: oauth2.Endpoint{AuthURL: k.meta.AuthorizationEndpoint, TokenURL: k.meta.TokenEndpoint}}
	if up.ClientID != "" {
		cfg.ClientID, cfg.ClientSecret = up.ClientID, up.ClientSecret
		return cfg, nil
	}
	if redirect == "" { // a refresh: the connection has the client it was made with
		return cfg, nil
	}
	if c, ok := k.clients[redirect]; ok {
		return c, nil
	}
	if k.meta.RegistrationEndpoint == "" {
		return cfg, fmt.Errorf("its authorization server %s has no registration endpoint (RFC 7591): configure oauth.client_id", k.meta.Issuer)
	}
	name := a.ClientName
	if name == "" {
		name = "Legate"
	}
	reg, err := oauthex.RegisterClient(ctx, k.meta.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none", ClientName: name,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, Scope: strings.Join(k.scopes, " "),
	}, k.hc)
	if err != nil {
		return cfg, fmt.Errorf("registering a client with %s: %w", k.meta.RegistrationEndpoint, err)
	}
	cfg.ClientID, cfg.ClientSecret = reg.ClientID, reg.ClientSecret
	if cfg.ClientSecret == "" {
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	k.clients[redirect] = cfg
	return cfg, nil
}
