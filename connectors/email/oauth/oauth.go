// Package oauth signs the email connector in to IMAP and SMTP with OAuth
// 2.0 access tokens: the SASL mechanisms XOAUTH2 (Gmail's and Microsoft
// 365's) and OAUTHBEARER (RFC 7628), for go-imap and go-mail alike; and
// the exchange of a refresh token for access tokens at a token endpoint,
// each held until it is about to expire.
package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/wneessen/go-mail/smtp"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Mechanisms are the values of the connector's auth field that use a token.
const (
	XOAUTH2     = "xoauth2"
	OAUTHBEARER = "oauthbearer"
)

// Provider is a provider's token endpoint and the scopes mail needs.
type Provider struct {
	TokenURL string
	Scopes   []string
}

// Providers are the oauth_provider shortcuts.
var Providers = map[string]Provider{
	"gmail":     {TokenURL: "https://oauth2.googleapis.com/token", Scopes: []string{"https://mail.google.com/"}},
	"microsoft": {TokenURL: "https://login.microsoftonline.com/common/oauth2/v2.0/token", Scopes: []string{"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send", "offline_access"}},
}

// Client is the SASL client of mechanism mech for username and token.
func Client(mech, username, token string, host string, port int) sasl.Client {
	if mech == OAUTHBEARER {
		return sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: username, Token: token, Host: host, Port: port})
	}
	return &xoauth2{username: username, token: token}
}

// xoauth2 is the client side of SASL XOAUTH2: the user and the bearer
// token in one initial response; a refusal comes as a JSON challenge,
// answered with an empty response for the server to end in failure.
type xoauth2 struct{ username, token string }

func (x *xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.username + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x *xoauth2) Next([]byte) ([]byte, error) { return []byte{}, nil }

// Refused reports whether err is a server's refusal of an OAUTHBEARER
// token.
func Refused(err error) bool {
	var be *sasl.OAuthBearerError
	return errors.As(err, &be)
}

// SMTPAuth makes a SASL client go-mail's smtp.Auth.
func SMTPAuth(c sasl.Client) smtp.Auth { return smtpAuth{c} }

type smtpAuth struct{ c sasl.Client }

func (a smtpAuth) Start(*smtp.ServerInfo) (string, []byte, error) { return a.c.Start() }

func (a smtpAuth) Next(from []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	return a.c.Next(from)
}

// Tokens holds the access tokens got for each refresh token.
type Tokens struct {
	mu    sync.Mutex
	held  map[string]held // by key
	group singleflight.Group
	// HTTP is the client the token endpoint is called with.
	HTTP *http.Client
}

type held struct {
	access string
	expiry time.Time
}

// maxHeld bounds the credentials whose tokens are held.
const maxHeld = 64

func key(tokenURL, clientID, secret, refresh string) string {
	sum := sha256.Sum256([]byte(tokenURL + "\x00" + clientID + "\x00" + secret + "\x00" + refresh))
	return hex.EncodeToString(sum[:16])
}

// Exchange is a kit's Exchange with a shared refresh token: an access
// token held while valid, else one got at tokenURL for clientID, with the
// client secret of credential secretCred when the call has one.
func (t *Tokens) Exchange(tokenURL, clientID, secretCred string) func(context.Context, *connectors.Call, string, string) (string, error) {
	return func(ctx context.Context, call *connectors.Call, refresh, expired string) (string, error) {
		secret := ""
		if call.Credentials != nil && call.Credentials.Has(secretCred) {
			v, err := call.Credentials.Get(ctx, secretCred)
			if err != nil {
				return "", connectors.CredentialError("email", secretCred, err)
			}
			secret = v
		}
		return t.Access(ctx, tokenURL, clientID, secret, refresh, expired)
	}
}

// Access returns an access token for refresh: the one held while it has
// a minute left and is not expired (the token just refused), else a new
// one from tokenURL; calls that find it expired together share the new one.
func (t *Tokens) Access(ctx context.Context, tokenURL, clientID, secret, refresh, expired string) (string, error) {
	k := key(tokenURL, clientID, secret, refresh)
	get := func() (string, bool) {
		t.mu.Lock()
		defer t.mu.Unlock()
		h, ok := t.held[k]
		return h.access, ok && h.access != expired && (h.expiry.IsZero() || time.Until(h.expiry) > time.Minute)
	}
	if tok, ok := get(); ok {
		return tok, nil
	}
	v, err, _ := t.group.Do(k+"\x00"+expired, func() (any, error) {
		if tok, ok := get(); ok {
			return tok, nil
		}
		conf := &oauth2.Config{ClientID: clientID, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
		tok, err := conf.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, t.HTTP), &oauth2.Token{RefreshToken: refresh}).Token()
		if err != nil {
			return nil, refreshError(ctx, tokenURL, err)
		}
		if tok.AccessToken == "" {
			return nil, saas.Mapping("email", "the token endpoint answered without an access token")
		}
		t.mu.Lock()
		if t.held == nil || len(t.held) >= maxHeld {
			t.held = map[string]held{}
		}
		t.held[k] = held{access: tok.AccessToken, expiry: tok.Expiry}
		t.mu.Unlock()
		return tok.AccessToken, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

var oauthCode = regexp.MustCompile(`^[a-z_]{1,40}$`)

// refreshError is a refused refresh AUTH_EXPIRED, naming what to renew; a
// failure to reach the endpoint stays a network failure.
func refreshError(ctx context.Context, tokenURL string, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		if strings.Contains(err.Error(), "oauth2: cannot parse") || strings.Contains(err.Error(), "missing access_token") {
			return saas.Mapping("email", "the token endpoint's answer is not a token")
		}
		return saas.Classify(ctx, err, "email")
	}
	if re.Response != nil && re.Response.StatusCode >= 500 {
		return legate.Errorf(legate.CodeTransient, "email: the token endpoint %s answered %d", tokenURL, re.Response.StatusCode)
	}
	code := "refused"
	if oauthCode.MatchString(re.ErrorCode) {
		code = re.ErrorCode
	}
	return legate.Errorf(legate.CodeAuthExpired, "email: the token endpoint %s refused the refresh token (%s); reconnect the account: renew the oauth_refresh_token credential (and oauth_client_secret), or connect again", tokenURL, code)
}
