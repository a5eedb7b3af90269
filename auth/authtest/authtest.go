// Package authtest fakes an OAuth authorization server for tests of
// inbound authentication: a JWKS served over HTTP on 127.0.0.1 and access
// tokens signed by its keys.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// The protected resource the fake issuer's tokens are for, and the
// challenge a 401 names with it.
const (
	Resource    = "https://legate.example.com/mcp"
	MetadataURL = "https://legate.example.com/.well-known/oauth-protected-resource"
	Challenge   = `Bearer resource_metadata="` + MetadataURL + `"`
)

// IDP is a fake authorization server: its JWKS over HTTP on 127.0.0.1, and
// tokens signed by its keys.
type IDP struct {
	// Server serves the JWKS; Issuer is its URL with a final slash.
	Server *httptest.Server
	Issuer string
	// Key signs tokens and is published.
	Key jose.JSONWebKey
	// Fetches counts the fetches of the JWKS.
	Fetches atomic.Int32

	t      *testing.T
	mu     sync.Mutex
	public jose.JSONWebKeySet
}

// NewIDP starts an issuer with one published key, k1, stopped when t ends.
func NewIDP(t *testing.T) *IDP {
	d := &IDP{t: t}
	d.Key = d.NewKey("k1")
	d.Publish(d.Key)
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.Fetches.Add(1)
		d.mu.Lock()
		defer d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(d.public)
	}))
	t.Cleanup(d.Server.Close)
	d.Issuer = d.Server.URL + "/"
	return d
}

// NewKey makes a P-256 key with key id kid, not published.
func (d *IDP) NewKey(kid string) jose.JSONWebKey {
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		d.t.Fatal(err)
	}
	return jose.JSONWebKey{Key: raw, KeyID: kid}
}

// Publish adds a key's public half to the JWKS, without "alg", as many
// issuers publish them.
func (d *IDP) Publish(k jose.JSONWebKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.public.Keys = append(d.public.Keys, k.Public())
}

// Config is the auth section of a config document trusting this issuer
// for Resource, followed by extra.
func (d *IDP) Config(extra string) string {
	return fmt.Sprintf("auth:\n  resource: %s\n  oauth:\n    issuer: %s\n    jwks_url: %s/jwks.json\n%s", Resource, d.Issuer, d.Server.URL, extra)
}

// Claims are a valid token's claims for principal sub.
func (d *IDP) Claims(sub string) map[string]any {
	return map[string]any{"iss": d.Issuer, "aud": []string{Resource}, "sub": sub, "exp": time.Now().Add(time.Hour),
		"iat": time.Now(), "tenant": "acme", "role": "approver", "profile": "p1", "scope": "mcp:tools read"}
}

// Sign signs claims with key (ES256), its key id in the header; times
// are written as NumericDate (seconds since the epoch).
func (d *IDP) Sign(claims map[string]any, key jose.JSONWebKey) string {
	payload := make(map[string]any, len(claims))
	for k, v := range claims {
		if t, ok := v.(time.Time); ok {
			v = t.Unix()
		}
		payload[k] = v
	}
	b, err := json.Marshal(payload)
	if err != nil {
		d.t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.KeyID))
	if err != nil {
		d.t.Fatal(err)
	}
	sig, err := signer.Sign(b)
	if err != nil {
		d.t.Fatal(err)
	}
	tok, err := sig.CompactSerialize()
	if err != nil {
		d.t.Fatal(err)
	}
	return tok
}
