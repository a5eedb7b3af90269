package connections

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/sources"
)

// An UpstreamApp is the OAuth client through which people connect an
// OAuth-protected upstream MCP server: its endpoints and client are
// discovered (RFC 9728, RFC 8414) and registered (RFC 7591) by package
// mcpauth, or configured.
type UpstreamApp struct {
	// Tenant owns the upstream ("" for a shared one).
	Tenant string
	// Config is the client, with its endpoints and scopes; the flow sets
	// its RedirectURL.
	Config oauth2.Config
	// Params are added to the authorization request and the code
	// exchange: the resource indicator (RFC 8707).
	Params map[string]string
	// Registered says the client was registered for the redirect URI
	// (RFC 7591): it travels in the state and is kept with each
	// connection, whose refreshes it makes (Config then may have no
	// ClientID: a refresh in a process that registered none).
	Registered bool
	// HTTPClient reaches the token endpoint (the code exchange and
	// refreshes): the guard of the upstream's flow, since its endpoints
	// come from the upstream's metadata. Nil: a client that refuses
	// every private address.
	HTTPClient *http.Client
}

// app is the OAuth client connections to one instance are made with.
type app struct {
	id, tenant string
	cfg        *oauth2.Config
	params     map[string]string
	registered bool
	hc         *http.Client // the token endpoint's client
}

// client is the HTTP client of a's token endpoint.
func (a *app) client(m *apps) *http.Client {
	if a.hc != nil {
		return a.hc
	}
	return cmp.Or(m.opts.HTTPClient, m.guards.client(nil))
}

// instance is the HTTP client of def's OAuth endpoints: given (the
// manager's Options.HTTPClient) when set, else netguard with the hosts of
// the endpoints the operator configured allowed on a private network, so
// that a redirect from one cannot reach any other.
func (g *guards) instance(given *http.Client, def sources.InstanceDef) *http.Client {
	if given != nil {
		return given
	}
	var allow []string
	if def.OAuth != nil {
		for _, u := range []string{def.OAuth.AuthorizeURL, def.OAuth.TokenURL, def.OAuth.RevokeURL} {
			if hp, err := netguard.HostPort(u); err == nil {
				allow = append(allow, hp)
			}
		}
	}
	return g.client(allow)
}

// guards keeps a netguard client per list of allowed hosts, for the
// manager's life (each keeps its connections).
type guards struct{ m sync.Map } // the allowed hosts, joined -> *http.Client

// client is the netguard client allowing allow.
func (g *guards) client(allow []string) *http.Client {
	slices.Sort(allow)
	key := strings.Join(allow, " ")
	if hc, ok := g.m.Load(key); ok {
		return hc.(*http.Client)
	}
	hc, _ := g.m.LoadOrStore(key, netguard.NewClient(netguard.Options{Timeout: 30 * time.Second, Allow: allow,
		Hint: "only the hosts of an OAuth app's configured endpoints may be on a private network"}))
	return hc.(*http.Client)
}

func (a *app) options() []oauth2.AuthCodeOption {
	var opts []oauth2.AuthCodeOption
	for k, v := range a.params {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	return opts
}

// apps finds the OAuth app a connection is made and refreshed with: a
// connector instance's, or an upstream's (Options.Upstreams).
type apps struct {
	opts   *Options
	guards guards
}

// isUpstream reports whether instance is an upstream people connect (no
// connector instance has its id).
func (m *apps) isUpstream(instance string) bool {
	_, ok := m.def(instance)
	return !ok && m.opts.Upstreams != nil
}

// redirectFor is the callback of instance's app: its configured
// redirect_url, else Legate's public origin (or requestOrigin) +
// CallbackPath.
func (m *apps) redirectFor(instance, requestOrigin string) (string, error) {
	if def, ok := m.def(instance); ok && def.OAuth != nil && def.OAuth.RedirectURL != "" {
		return def.OAuth.RedirectURL, nil
	}
	o := origin(m.opts.Resource)
	if o == "" {
		o = requestOrigin
	}
	if o == "" {
		key := "the instance's oauth.redirect_url"
		if m.isUpstream(instance) {
			key = "the URL Legate is reached at"
		}
		return "", legate.Errorf(legate.CodeInvalidArgument, "%s: Legate's public URL is not known: set auth.resource or %s", instance, key)
	}
	return o + CallbackPath, nil
}

// appFor is instance's OAuth client with redirect as its callback (""
// for a refresh).
func (m *apps) appFor(ctx context.Context, instance, redirect string) (*app, error) {
	if m.isUpstream(instance) {
		ua, ok, err := m.opts.Upstreams(ctx, instance, redirect)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, legate.Errorf(legate.CodeNotFound, "no connector instance or OAuth-protected upstream %q", instance)
		}
		cfg := ua.Config
		cfg.RedirectURL = redirect
		return &app{id: instance, tenant: ua.Tenant, cfg: &cfg, params: ua.Params, registered: ua.Registered, hc: cmp.Or(ua.HTTPClient, m.guards.client(nil))}, nil
	}
	def, err := m.appOf(instance)
	if err != nil {
		return nil, err
	}
	cfg, err := m.oauthConfig(ctx, def, redirect)
	if err != nil {
		return nil, err
	}
	prov := config.ProviderOf(def.Type, def.OAuth.Provider)
	params := prov.Params
	if prov.UserScopes != "" && len(cfg.Scopes) > 0 {
		params = maps.Clone(params)
		if params == nil {
			params = map[string]string{}
		}
		params[prov.UserScopes] = strings.Join(cfg.Scopes, ",")
		cfg.Scopes = nil
	}
	hc := m.guards.instance(m.opts.HTTPClient, def)
	if prov.TokenField != "" {
		hc = liftToken(hc, prov.TokenField)
	}
	return &app{id: def.ID, tenant: def.Tenant, cfg: cfg, params: params, hc: hc}, nil
}

// Token is the access token of principal's connection to the upstream
// id, refreshed first when it is about to expire, or when it is refused
// (equal to refused): the Authorization of the principal's calls to an
// OAuth-protected upstream. An error is NOT_CONNECTED when there is no
// connection or it expired.
func (m *Manager) Token(ctx context.Context, tenant, principal, id, refused string) (string, error) {
	if !m.apps.isUpstream(id) {
		return "", fmt.Errorf("%s is not an OAuth-protected upstream", id)
	}
	return m.token(ctx, id, false, tenant, principal, refused)
}
