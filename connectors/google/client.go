package google

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// maxHeld bounds the credentials whose access tokens an instance holds
// (credentials may differ by tenant).
const maxHeld = 64

// tokens holds the access tokens got for each credential, and the API
// clients that send them.
type tokens struct {
	mu       sync.Mutex
	held     map[string]*held // by credentialKey
	byAccess map[string]*held // by access token
	group    *singleflight.Group
}

func newTokens() tokens {
	return tokens{held: map[string]*held{}, byAccess: map[string]*held{}, group: &singleflight.Group{}}
}

// held is an access token got for one credential, and the API clients
// that send it.
type held struct {
	key    string // credentialKey
	access string
	expiry time.Time
	scope  string
	sheets *sheets.Service
	drive  *drive.Service
}

// valid reports whether h may still be sent: a minute before its expiry,
// so that a request does not carry a token expiring on the way.
func (h *held) valid() bool { return h.expiry.IsZero() || time.Until(h.expiry) > time.Minute }

// credentialKey names a credential in memory without holding it.
func credentialKey(clientID, secret, refresh string) string {
	sum := sha256.Sum256([]byte(clientID + "\x00" + secret + "\x00" + refresh))
	return hex.EncodeToString(sum[:16])
}

// exchange is the kit's Exchange: the access token held for the call's
// credentials while valid, else a new one from the token endpoint; after
// an API refused expired, a new one unless another call got one already.
func (c *Connector) exchange(ctx context.Context, call *connectors.Call, refresh, expired string) (string, error) {
	secret, err := c.secret(ctx, call)
	if err != nil {
		return "", err
	}
	key := credentialKey(c.cfg.ClientID, secret, refresh)
	if h := c.tokens.get(key); h != nil && h.access != expired && h.valid() {
		return h.access, nil
	}
	// One exchange at a time per credential: calls that find the token
	// expired together share the new one.
	v, err, _ := c.tokens.group.Do(key+"\x00"+expired, func() (any, error) {
		if h := c.tokens.get(key); h != nil && h.access != expired && h.valid() {
			return h, nil
		}
		h, err := c.refresh(ctx, call, refresh)
		if err != nil {
			return nil, err
		}
		c.tokens.put(h)
		return h, nil
	})
	if err != nil {
		return "", err
	}
	return v.(*held).access, nil
}

func (c *Connector) secret(ctx context.Context, call *connectors.Call) (string, error) {
	if call.Credentials == nil {
		return "", connectors.CredentialError("google", credClientSecret, connectors.ErrNoCredential)
	}
	v, err := call.Credentials.Get(ctx, credClientSecret)
	if err == nil && v == "" {
		err = errors.New("empty")
	}
	if err != nil {
		return "", connectors.CredentialError("google", credClientSecret, err)
	}
	return v, nil
}

// refresh gets a new access token at the token endpoint.
func (c *Connector) refresh(ctx context.Context, call *connectors.Call, refresh string) (*held, error) {
	secret, err := c.secret(ctx, call)
	if err != nil {
		return nil, err
	}
	conf := &oauth2.Config{ClientID: c.cfg.ClientID, ClientSecret: secret,
		Endpoint: oauth2.Endpoint{TokenURL: c.cfg.OAuthURL, AuthStyle: oauth2.AuthStyleInParams}}
	tok, err := conf.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, c.http), &oauth2.Token{RefreshToken: refresh}).Token()
	if err != nil {
		return nil, tokenError(ctx, err)
	}
	if tok.AccessToken == "" {
		return nil, saas.Mapping("google", "the token endpoint answered without an access token")
	}
	h := &held{key: credentialKey(c.cfg.ClientID, secret, refresh), access: tok.AccessToken, expiry: tok.Expiry}
	if s, ok := tok.Extra("scope").(string); ok {
		h.scope = s
	}
	if err := c.clients(ctx, h); err != nil {
		return nil, err
	}
	return h, nil
}

// clients builds h's API clients: Google's, on the instance's guarded HTTP
// client with an oauth2 transport that sends h's access token, at the
// configured endpoints, logging nothing.
func (c *Connector) clients(ctx context.Context, h *held) error {
	hc := *c.http
	// The kit bounds each attempt by its context (timeout): the client's
	// own timer would only add a goroutine and a timer per request.
	hc.Timeout = 0
	hc.Transport = &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.access, TokenType: "Bearer"}),
		Base: capped{c.http.Transport}}
	quiet := option.WithLogger(slog.New(slog.DiscardHandler))
	var err error
	if h.sheets, err = sheets.NewService(ctx, option.WithHTTPClient(&hc), option.WithEndpoint(c.cfg.SheetsURL), quiet); err != nil {
		return legate.Errorf(legate.CodeInvalidArgument, "google: sheets_url: %v", err)
	}
	if h.drive, err = drive.NewService(ctx, option.WithHTTPClient(&hc), option.WithEndpoint(c.cfg.DriveURL+"drive/v3/"), quiet); err != nil {
		return legate.Errorf(legate.CodeInvalidArgument, "google: drive_url: %v", err)
	}
	return nil
}

// apis returns the API clients sending access, an access token the kit
// handed an attempt.
func (c *Connector) apis(ctx context.Context, access string) (*held, error) {
	if h := c.tokens.access(access); h != nil {
		return h, nil
	}
	// Dropped from the cache since the exchange: clients of its own.
	h := &held{access: access}
	return h, c.clients(ctx, h)
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

// maxAnswerBytes bounds the body of one API answer: a range read whole
// (a sheet by its name, a named range) can be large.
var maxAnswerBytes int64 = 32 << 20

// capped is a transport whose answers' bodies fail past maxAnswerBytes.
type capped struct{ base http.RoundTripper }

func (c capped) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxAnswerBytes}
	}
	return resp, err
}

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more tells a body that goes on from the end
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return 0, legate.Errorf(legate.CodeInvalidArgument, "google: the answer passed %d MiB; ask for less (a smaller range or limit)", maxAnswerBytes>>20)
	}
	return n, err
}

var oauthCode = regexp.MustCompile(`^[a-z_]{1,40}$`)

// tokenError makes an error of the token endpoint canonical: a refused
// grant or client is AUTH_EXPIRED (the account must be connected again),
// a refused scope PERMISSION_DENIED, 429 RATE_LIMITED, 5xx TRANSIENT.
func tokenError(ctx context.Context, err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil {
		if m := err.Error(); strings.Contains(m, "oauth2: cannot parse") || strings.Contains(m, "missing access_token") {
			return saas.Mapping("google", "the token endpoint's answer is not JSON")
		}
		return saas.Classify(ctx, err, "google")
	}
	status := re.Response.StatusCode
	msg := "the token endpoint answered " + strconv.Itoa(status)
	if oauthCode.MatchString(re.ErrorCode) { // an OAuth error code, nothing the endpoint echoed
		msg += " " + re.ErrorCode
	}
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		wait, _ := netguard.RetryAfter(re.Response.Header, time.Now())
		return saas.StatusError("google", status, wait, msg)
	case re.ErrorCode == "invalid_scope":
		return &legate.Error{Code: legate.CodePermissionDenied, Message: "google: " + msg + ": the refresh token was not granted the scopes asked"}
	}
	return &legate.Error{Code: legate.CodeAuthExpired, Message: "google: " + msg + ": the refresh token or the client was refused; connect the account again (a new refresh token) or check client_id and client_secret"}
}

// Reasons Google gives a 403 for a rate limit (Drive, in errors[].reason)
// and for one in the newer format (ErrorInfo.reason, status).
var rateReasons = []string{"userRateLimitExceeded", "rateLimitExceeded", "RATE_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED"}

// mapError makes an error of Google's client canonical. ctx is the
// attempt's. The message holds Google's code, status and reason, never
// its body.
func mapError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return saas.Classify(ctx, err, "google")
	}
	reasons := reasonsOf(ge)
	msg := "Google answered " + strconv.Itoa(ge.Code)
	if len(reasons) > 0 {
		msg += " (" + strings.Join(reasons, ", ") + ")"
	}
	if ge.Message != "" {
		msg += ": " + ge.Message
	}
	wait, _ := netguard.RetryAfter(ge.Header, time.Now())
	if ge.Code == http.StatusForbidden {
		for _, r := range reasons {
			for _, rate := range rateReasons {
				if r == rate {
					return &legate.Error{Code: legate.CodeRateLimited, RetryAfter: wait, Message: "google: " + msg}
				}
			}
		}
	}
	return saas.StatusError("google", ge.Code, wait, msg)
}

// reasonsOf lists the reasons of ge: those of its errors (Drive) and of
// its details' ErrorInfo (Sheets), with its status.
func reasonsOf(ge *googleapi.Error) []string {
	var out []string
	add := func(s string) {
		if s != "" && len(out) < 4 && !containsString(out, s) {
			out = append(out, s)
		}
	}
	for _, e := range ge.Errors {
		add(e.Reason)
	}
	for _, d := range ge.Details {
		if m, ok := d.(map[string]any); ok {
			if r, ok := m["reason"].(string); ok {
				add(r)
			}
		}
	}
	// The newer format's status is not parsed by googleapi: read the body.
	var body struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ge.Body), &body) == nil {
		add(body.Error.Status)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
