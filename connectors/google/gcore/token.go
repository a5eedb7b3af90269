package gcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/sync/singleflight"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// maxHeld bounds the credentials whose access tokens an instance holds
// (credentials may differ by tenant).
const maxHeld = 64

// credential is the kit's credential: refresh_token or
// service_account_json, whichever the call has, tagged with its kind.
const credential = "google_credential"

const (
	tagRefresh = "refresh\x00"
	tagAccount = "account\x00"
)

// tokens holds the access tokens got for each credential.
type tokens struct {
	mu       sync.Mutex
	held     map[string]*held // by credentialKey
	byAccess map[string]*held // by access token
	group    *singleflight.Group
}

func newTokens() tokens {
	return tokens{held: map[string]*held{}, byAccess: map[string]*held{}, group: &singleflight.Group{}}
}

// held is an access token got for one credential, its HTTP client and
// the API services built on it.
type held struct {
	key    string // credentialKey
	access string
	expiry time.Time
	scope  string

	mu       sync.Mutex
	hc       *http.Client
	services map[string]any
}

// valid reports whether h may still be sent: a minute before its expiry,
// so that a request does not carry a token expiring on the way.
func (h *held) valid() bool { return h.expiry.IsZero() || time.Until(h.expiry) > time.Minute }

// credentialKey names a credential in memory without holding it.
func credentialKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// Credentials wraps a call's credentials so that the kit's credential
// resolves to refresh_token or service_account_json, whichever is given:
// both, or neither, is a CONFIG_ERROR naming them. The connector wraps
// every call with it.
func Credentials(creds connectors.Credentials) connectors.Credentials {
	if creds == nil {
		return nil
	}
	if _, ok := creds.(either); ok {
		return creds
	}
	return either{creds}
}

type either struct{ connectors.Credentials }

func (e either) Has(name string) bool {
	if name == credential {
		return e.Credentials.Has(CredRefreshToken) || e.Credentials.Has(CredServiceAccount)
	}
	return e.Credentials.Has(name)
}

func (e either) Get(ctx context.Context, name string) (string, error) {
	if name != credential {
		return e.Credentials.Get(ctx, name)
	}
	get := func(n string) (string, error) {
		v, err := e.Credentials.Get(ctx, n)
		if errors.Is(err, connectors.ErrNoCredential) {
			return "", nil
		}
		return v, err
	}
	refresh, err := get(CredRefreshToken)
	if err != nil {
		return "", connectors.CredentialError("google", CredRefreshToken, err)
	}
	account, err := get(CredServiceAccount)
	if err != nil {
		return "", connectors.CredentialError("google", CredServiceAccount, err)
	}
	switch {
	case refresh != "" && account != "":
		return "", legate.Errorf(legate.CodeConfigError, "google: give the credential refresh_token (with client_secret) or service_account_json, not both")
	case refresh != "":
		return tagRefresh + refresh, nil
	case account != "":
		return tagAccount + account, nil
	}
	return "", legate.Errorf(legate.CodeConfigError, "google: no credential: give refresh_token (an OAuth refresh token, with client_secret) or service_account_json (a service account's key, with subject in the config to act as a user)")
}

// exchange is the kit's Exchange: the access token held for the call's
// credential while valid, else a new one from the token endpoint; after
// an API refused expired, a new one unless another call got one already.
func (c *Core) exchange(ctx context.Context, call *connectors.Call, cred, expired string) (string, error) {
	key, err := c.keyOf(ctx, call, cred)
	if err != nil {
		return "", err
	}
	if h := c.tokens.get(key); h != nil && h.access != expired && h.valid() {
		return h.access, nil
	}
	// One exchange at a time per credential: calls that find the token
	// expired together share the new one.
	v, err, _ := c.tokens.group.Do(key+"\x00"+expired, func() (any, error) {
		if h := c.tokens.get(key); h != nil && h.access != expired && h.valid() {
			return h, nil
		}
		h, err := c.fetch(ctx, call, cred)
		if err != nil {
			return nil, err
		}
		h.key = key
		c.tokens.put(h)
		return h, nil
	})
	if err != nil {
		return "", err
	}
	return v.(*held).access, nil
}

func (c *Core) keyOf(ctx context.Context, call *connectors.Call, cred string) (string, error) {
	if account, ok := strings.CutPrefix(cred, tagAccount); ok {
		return credentialKey("account", account, c.opts.Subject, strings.Join(c.Scopes, " ")), nil
	}
	secret, err := c.secret(ctx, call)
	if err != nil {
		return "", err
	}
	return credentialKey(c.opts.ClientID, secret, strings.TrimPrefix(cred, tagRefresh)), nil
}

func (c *Core) secret(ctx context.Context, call *connectors.Call) (string, error) {
	if call.Credentials == nil {
		return "", connectors.CredentialError("google", CredClientSecret, connectors.ErrNoCredential)
	}
	v, err := call.Credentials.Get(ctx, CredClientSecret)
	if err == nil && v == "" {
		err = errors.New("empty")
	}
	if err != nil {
		return "", connectors.CredentialError("google", CredClientSecret, err)
	}
	return v, nil
}

// Fresh gets a new access token for the call's credential at the token
// endpoint and holds it, for a connection test: it returns the token's
// expiry and the scopes the endpoint says it granted ("" when it does
// not say).
func (c *Core) Fresh(ctx context.Context, call *connectors.Call) (expiry time.Time, scope string, err error) {
	cred, err := c.Kit.Token(ctx, call)
	if err != nil {
		return time.Time{}, "", err
	}
	key, err := c.keyOf(ctx, call, cred)
	if err != nil {
		return time.Time{}, "", err
	}
	h, err := c.fetch(ctx, call, cred)
	if err != nil {
		return time.Time{}, "", err
	}
	h.key = key
	c.tokens.put(h)
	return h.expiry, h.scope, nil
}

// ServiceAccount reports whether the call's credential is a service
// account's key.
func (c *Core) ServiceAccount(ctx context.Context, call *connectors.Call) bool {
	cred, err := c.Kit.Token(ctx, call)
	return err == nil && strings.HasPrefix(cred, tagAccount)
}

// fetch gets a new access token at the token endpoint: by refresh token,
// or by a service account's signed assertion.
func (c *Core) fetch(ctx context.Context, call *connectors.Call, cred string) (*held, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, c.HTTP)
	var src oauth2.TokenSource
	if account, ok := strings.CutPrefix(cred, tagAccount); ok {
		conf, err := google.JWTConfigFromJSON([]byte(account), c.Scopes...)
		if err != nil {
			return nil, legate.Errorf(legate.CodeConfigError, "google: service_account_json: not a service account's JSON key (Google Cloud console, IAM, Service accounts, Keys, JSON)")
		}
		conf.Subject, conf.TokenURL = c.opts.Subject, c.opts.OAuthURL
		src = conf.TokenSource(ctx)
	} else {
		secret, err := c.secret(ctx, call)
		if err != nil {
			return nil, err
		}
		conf := &oauth2.Config{ClientID: c.opts.ClientID, ClientSecret: secret,
			Endpoint: oauth2.Endpoint{TokenURL: c.opts.OAuthURL, AuthStyle: oauth2.AuthStyleInParams}}
		src = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: strings.TrimPrefix(cred, tagRefresh)})
	}
	tok, err := src.Token()
	if err != nil {
		return nil, tokenError(ctx, err)
	}
	if tok.AccessToken == "" {
		return nil, saas.Mapping("google", "the token endpoint answered without an access token")
	}
	h := &held{access: tok.AccessToken, expiry: tok.Expiry}
	if s, ok := tok.Extra("scope").(string); ok {
		h.scope = s
	}
	return h, nil
}

func (t *tokens) get(key string) *held {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[key]
}

func (t *tokens) access(access string) *held {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byAccess[access]
}

func (t *tokens) put(h *held) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.held[h.key]; old != nil {
		delete(t.byAccess, old.access)
	}
	for k, old := range t.held {
		if len(t.held) < maxHeld {
			break
		}
		delete(t.held, k)
		delete(t.byAccess, old.access)
	}
	t.held[h.key] = h
	t.byAccess[h.access] = h
}
