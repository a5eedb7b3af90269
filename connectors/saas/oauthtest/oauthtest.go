// Package oauthtest is a stand-in for a provider's OAuth 2.0 endpoints,
// for the SaaS connectors' test servers: an authorization endpoint that
// approves at once for the test user a request names (header
// X-Standin-User, or query parameter user), a token endpoint that
// exchanges a code only with its PKCE (S256) verifier and refreshes with
// rotation, and a revocation endpoint (RFC 7009). It keeps which user
// each token it issued belongs to, so that an API stand-in can check the
// bearer of each call and say whose it is.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// UserHeader names the test user the authorization endpoint approves for.
const UserHeader = "X-Standin-User"

// Provider is the stand-in. Its fields may be set before it serves; the
// rest through its methods. It is safe for concurrent use.
type Provider struct {
	ClientID, ClientSecret string
	// Prefix is the stand-in's access tokens' prefix ("xoxb-" for Slack).
	Prefix string
	// ExpiresIn is the lifetime, in seconds, the token endpoint announces
	// (default 3600).
	ExpiresIn int
	// NewToken, when set, makes each token issued ("access" or "refresh"
	// kind, for user): a canary test's recognisable values.
	NewToken func(kind, user string) string
	// KeepRefresh makes a refresh keep its refresh token and the access
	// tokens already issued, as Google does, instead of rotating them.
	KeepRefresh bool
	// Resource, when set, is the resource indicator (RFC 8707) every code
	// exchange and refresh must name: the token endpoint refuses one
	// without it (invalid_target), as an authorization server that issues
	// tokens for several resources does.
	Resource string

	mu          sync.Mutex
	codes       map[string]grant
	access      map[string]string // token -> user
	refresh     map[string]string // token -> user
	failRefresh bool
	refreshes   int
	revoked     []string
	issued      []string
	calls       []Call
}

type grant struct {
	user, challenge, redirect string
}

// New returns a provider for the client clientID with secret.
func New(clientID, secret, prefix string) *Provider {
	return &Provider{ClientID: clientID, ClientSecret: secret, Prefix: prefix, codes: map[string]grant{}, access: map[string]string{}, refresh: map[string]string{}}
}

// Mount registers authorize, token and revoke under prefix with handle
// (slacktest.Customize's Handle, or a ServeMux's).
func (p *Provider) Mount(handle func(pattern string, h http.HandlerFunc), prefix string) {
	handle(prefix+"/authorize", p.authorize)
	handle(prefix+"/token", p.token)
	handle(prefix+"/revoke", p.revoke)
}

// User returns the user an access token belongs to; false for a token
// never issued, refreshed away, expired or revoked.
func (p *Provider) User(token string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, ok := p.access[token]
	return u, ok
}

// Expire makes every access token of user expire: calls with them are
// refused until the client refreshes.
func (p *Provider) Expire(user string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, u := range p.access {
		if u == user {
			delete(p.access, t)
		}
	}
}

// FailRefresh makes the token endpoint refuse (or accept again) refreshes.
func (p *Provider) FailRefresh(fail bool) {
	p.mu.Lock()
	p.failRefresh = fail
	p.mu.Unlock()
}

// Refreshes counts the refreshes granted.
func (p *Provider) Refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshes
}

// Issued lists every access and refresh token the token endpoint issued.
func (p *Provider) Issued() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.issued...)
}

// Revoked lists the tokens revoked through the revocation endpoint.
func (p *Provider) Revoked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.revoked...)
}

func random(prefix string) string {
	b := make([]byte, 16)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	user := r.Header.Get(UserHeader)
	if user == "" {
		user = q.Get("user")
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case err != nil || redirect.Scheme == "":
		http.Error(w, "redirect_uri is missing", http.StatusBadRequest)
		return
	case q.Get("client_id") != p.ClientID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case user == "":
		http.Error(w, "no test user: send "+UserHeader, http.StatusBadRequest)
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		back.Set("error", "invalid_request")
		back.Set("error_description", "response_type code with a S256 code_challenge is required")
	} else {
		code := random("code-")
		p.mu.Lock()
		p.codes[code] = grant{user: user, challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		p.mu.Unlock()
		back.Set("code", code)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// client checks the client's credentials, in a Basic header or the form.
func (p *Provider) client(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	return id == p.ClientID && subtle.ConstantTimeCompare([]byte(secret), []byte(p.ClientSecret)) == 1
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "POST a form")
		return
	}
	if !p.client(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "wrong client_id or client_secret")
		return
	}
	if p.Resource != "" && r.PostFormValue("resource") != p.Resource {
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource must name "+p.Resource+", got "+strconv.Quote(r.PostFormValue("resource")))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var user string
	switch r.PostFormValue("grant_type") {
	case "authorization_code":
		g, ok := p.codes[r.PostFormValue("code")]
		delete(p.codes, r.PostFormValue("code"))
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		switch {
		case !ok:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the code_verifier does not match the code_challenge")
			return
		case r.PostFormValue("redirect_uri") != g.redirect:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		}
		user = g.user
	case "refresh_token":
		u, ok := p.refresh[r.PostFormValue("refresh_token")]
		if !ok || p.failRefresh {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is invalid, expired or revoked")
			return
		}
		p.refreshes++
		user = u
		if p.KeepRefresh {
			access := random(p.Prefix + strings.ToLower(user) + "-")
			if p.NewToken != nil {
				access = p.NewToken("access", user)
			}
			p.access[access] = user
			p.issued = append(p.issued, access)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": p.expiresIn()})
			return
		}
		delete(p.refresh, r.PostFormValue("refresh_token")) // rotated
		for t, tu := range p.access {
			if tu == u {
				delete(p.access, t)
			}
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", r.PostFormValue("grant_type"))
		return
	}
	access, refresh := random(p.Prefix+strings.ToLower(user)+"-"), random("refresh-")
	if p.NewToken != nil {
		access, refresh = p.NewToken("access", user), p.NewToken("refresh", user)
	}
	p.access[access], p.refresh[refresh] = user, user
	p.issued = append(p.issued, access, refresh)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "access_token": access, "token_type": "Bearer", "expires_in": p.expiresIn(), "refresh_token": refresh})
}

func (p *Provider) expiresIn() int {
	if p.ExpiresIn == 0 {
		return 3600
	}
	return p.ExpiresIn
}

func (p *Provider) revoke(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	tok := r.PostFormValue("token")
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.access[tok]; ok {
		delete(p.access, tok)
		p.revoked = append(p.revoked, tok)
	}
	if _, ok := p.refresh[tok]; ok {
		delete(p.refresh, tok)
		p.revoked = append(p.revoked, tok)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true,"revoked":true}`))
}

// Call is the bearer token an API call came with and the user it belongs
// to ("" for a token the provider did not issue or no longer honours).
type Call struct {
	Token, User string
}

// Bearer records the bearer token of an API request and returns the user
// it belongs to; false for a token never issued, refreshed away, expired
// or revoked. An API stand-in calls it for each request it serves.
func (p *Provider) Bearer(r *http.Request) (string, bool) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	p.mu.Lock()
	defer p.mu.Unlock()
	u, ok := p.access[tok]
	p.calls = append(p.calls, Call{Token: tok, User: u})
	return u, ok
}

// Calls lists the calls Bearer recorded, in order.
func (p *Provider) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// WithBearer is a transport that adds an Authorization header with token
// to every request: a gateway principal's MCP client.
func WithBearer(token string, base http.RoundTripper) http.RoundTripper {
	return bearerTransport{token: token, base: base}
}

type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// Connect opens connectURL (a gateway's /connect/{instance}, or a link
// Legate gave) as a browser signed in to the gateway with bearer would (a
// new one, with cookies of its own), goes on from Legate's page,
// approves at the provider as user and follows every redirect. It
// returns the last page's body, and an error unless that page is the
// gateway's callback saying the instance is connected.
func Connect(connectURL, bearer, user string) (string, error) {
	b := NewBrowser(user)
	b.Bearer = bearer
	return b.Connect(connectURL)
}

// A Browser is one person's user agent: a cookie jar of its own, the
// bearer it is signed in to Legate with (sent to Legate's /connect/
// pages alone), and the provider's test user it approves as.
type Browser struct {
	Client *http.Client
	// Bearer, when set, is sent to the connect page that carries no link.
	Bearer string
	// User is who approves at the provider.
	User string
}

// NewBrowser returns a browser approving as user.
func NewBrowser(user string) *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{Client: &http.Client{Jar: jar}, User: user}
}

// Connect starts a consent from connectURL (Start) and follows it
// (Follow), and fails unless Legate's callback says it connected.
func (b *Browser) Connect(connectURL string) (string, error) {
	consent, err := b.Start(connectURL)
	if err != nil {
		return "", err
	}
	status, body, at, err := b.Follow(consent)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK || !strings.Contains(body, "is connected") || !strings.HasSuffix(at.Path, "/connect/callback") {
		return body, fmt.Errorf("connecting as %s: %d at %s: %s", b.User, status, at, body)
	}
	return body, nil
}

var (
	formAction = regexp.MustCompile(`<form method="post" action="([^"]*)"`)
	formInput  = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// Start opens Legate's page at connectURL and goes on, as its person
// would: it posts the page's form, and returns the provider's consent
// URL the form sends the browser to, not followed yet.
func (b *Browser) Start(connectURL string) (string, error) {
	req, err := http.NewRequest("GET", connectURL, nil)
	if err != nil {
		return "", err
	}
	if b.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+b.Bearer)
	}
	res, err := b.Client.Do(req)
	if err != nil {
		return "", err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	action := formAction.FindSubmatch(page)
	if res.StatusCode != http.StatusOK || action == nil {
		return "", fmt.Errorf("the connect page %s: %s: %s", connectURL, res.Status, page)
	}
	form := url.Values{}
	for _, m := range formInput.FindAllSubmatch(page, -1) {
		form.Set(string(m[1]), html.UnescapeString(string(m[2])))
	}
	to, err := res.Request.URL.Parse(html.UnescapeString(string(action[1])))
	if err != nil {
		return "", err
	}
	req, _ = http.NewRequest("POST", to.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", to.Scheme+"://"+to.Host)
	c := *b.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err = c.Do(req)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") == "" {
		return "", fmt.Errorf("going on from the connect page %s: %s: %s", connectURL, res.Status, body)
	}
	return res.Header.Get("Location"), nil
}

// Follow opens u (a provider's consent URL) in the browser, approving as
// its user (none: u names one, or the provider approves without), and
// follows every redirect; it returns the last page's
// status, body and URL.
func (b *Browser) Follow(u string) (int, string, *url.URL, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return 0, "", nil, err
	}
	if b.User != "" {
		req.Header.Set(UserHeader, b.User)
	}
	res, err := b.Client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, string(body), res.Request.URL, nil
}
