package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/legate-mcp/legate/store"
)

// Limits of a client registration.
const (
	maxRegistrationBody = 16 << 10
	maxRedirectURIs     = 10
	maxRedirectURILen   = 2000
	maxClientNameLen    = 200
)

// registration is the client metadata of RFC 7591 §2 that Legate reads.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// register is the dynamic client registration endpoint (RFC 7591). A
// client is public (PKCE alone) unless it asks for client_secret_basic or
// client_secret_post; the number of clients is bounded, and clients that
// never obtained a token are deleted once unused_client_ttl has passed.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "register with POST")
		return
	}
	var req registration
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegistrationBody))
	if err := dec.Decode(&req); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON object of client metadata")
		return
	}
	if code, msg := checkRegistration(&req); code != "" {
		oauthError(w, http.StatusBadRequest, code, msg)
		return
	}
	ctx := r.Context()
	now := s.now()
	if wait := s.registerLimit.allow(sourceOf(r), now); wait > 0 {
		tooMany(w, wait, false)
		return
	}
	if _, err := s.store.DeleteExpired(ctx, now); err != nil {
		s.log.Error("deleting expired requests and tokens", "err", err)
	}
	if n, err := s.store.DeleteUnusedClients(ctx, now.Add(-s.unusedTTL)); err != nil {
		s.log.Error("deleting unused clients", "err", err)
	} else if n > 0 {
		s.log.Info("deleted clients that never obtained a token", "count", n)
	}
	count, err := s.store.CountClients(ctx)
	if err != nil {
		s.log.Error("counting clients", "err", err)
		oauthError(w, http.StatusInternalServerError, "server_error", "the client could not be registered")
		return
	}
	if count >= s.maxClients {
		// Full: clients that obtained no token within an authorization
		// request's lifetime of registering make room, so that
		// registrations sent to fill the table hold it for minutes, not
		// for unused_client_ttl.
		if n, err := s.store.DeleteUnusedClients(ctx, now.Add(-requestLifetime)); err == nil && n > 0 {
			s.log.Warn("the client table is full: deleted clients that obtained no token", "count", n)
			count, err = s.store.CountClients(ctx)
			if err != nil {
				count = s.maxClients
			}
		}
	}
	if count >= s.maxClients {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "too many clients are registered; try again later")
		return
	}
	c := store.OAuthClient{ID: "lgc_" + randomID(), Name: req.ClientName, RedirectURIs: req.RedirectURIs, CreatedAt: now}
	var secret string
	if req.TokenEndpointAuthMethod != "none" {
		secret = "lgs_" + randomID()
		c.SecretHash = hashSecret(secret)
	}
	if err := s.store.CreateClient(ctx, c); err != nil {
		s.log.Error("registering a client", "err", err)
		oauthError(w, http.StatusInternalServerError, "server_error", "the client could not be registered")
		return
	}
	s.log.Info("client registered", "client", c.ID, "name", c.Name)
	resp := map[string]any{
		"client_id":                  c.ID,
		"client_id_issued_at":        now.Unix(),
		"client_name":                c.Name,
		"redirect_uris":              c.RedirectURIs,
		"token_endpoint_auth_method": req.TokenEndpointAuthMethod,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"scope":                      ScopeMCP,
	}
	if secret != "" {
		resp["client_secret"] = secret
		resp["client_secret_expires_at"] = 0
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(resp)
}

// checkRegistration checks and completes a registration; it returns the
// RFC 7591 error code and message of a refusal.
func checkRegistration(req *registration) (string, string) {
	switch req.TokenEndpointAuthMethod {
	case "":
		req.TokenEndpointAuthMethod = "none"
	case "none", "client_secret_basic", "client_secret_post":
	default:
		return "invalid_client_metadata", fmt.Sprintf("token_endpoint_auth_method %q: use none, client_secret_basic or client_secret_post", req.TokenEndpointAuthMethod)
	}
	for _, g := range req.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return "invalid_client_metadata", fmt.Sprintf("grant type %q is not supported: authorization_code and refresh_token are", g)
		}
	}
	for _, t := range req.ResponseTypes {
		if t != "code" {
			return "invalid_client_metadata", fmt.Sprintf("response type %q is not supported: code is", t)
		}
	}
	if len(req.ClientName) > maxClientNameLen || strings.IndexFunc(req.ClientName, unicode.IsControl) >= 0 {
		return "invalid_client_metadata", fmt.Sprintf("client_name: at most %d characters, no control characters", maxClientNameLen)
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > maxRedirectURIs {
		return "invalid_redirect_uri", fmt.Sprintf("redirect_uris: give 1 to %d", maxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if msg := checkRedirectURI(u); msg != "" {
			return "invalid_redirect_uri", fmt.Sprintf("redirect URI %q: %s", u, msg)
		}
	}
	req.RedirectURIs = slices.Compact(req.RedirectURIs)
	return "", ""
}

// appSchemes are the private-use schemes of MCP clients that predate
// the reverse-DNS rule (RFC 8252 §7.1) and are accepted by name.
var appSchemes = []string{"cursor"}

// privateSchemeRE is a private-use scheme in reverse-DNS form: at least
// two labels, lower case (com.example.app).
var privateSchemeRE = regexp.MustCompile(`^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$`)

// checkRedirectURI accepts, and only accepts, https with a host, http to
// a loopback address named exactly (RFC 8252 §7.3) and a native app's
// private-use scheme in reverse-DNS form (§7.1); never a fragment or a
// user name. Every other scheme (javascript:, data:, ms-msdt:,
// search-ms:, jar:, view-source:…) is refused by construction.
func checkRedirectURI(s string) string {
	if len(s) > maxRedirectURILen {
		return fmt.Sprintf("longer than %d characters", maxRedirectURILen)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme == "":
		return "not an absolute URI"
	case strings.Contains(s, "#"):
		return "must not have a fragment"
	case u.User != nil || strings.Contains(u.Host, "@"):
		return "must not hold a user name or password"
	case u.Scheme == "https":
		if u.Hostname() == "" {
			return "no host"
		}
	case u.Scheme == "http":
		if !isLoopback(u.Hostname()) {
			return "http is allowed only to 127.0.0.1, [::1] or localhost"
		}
	case privateSchemeRE.MatchString(u.Scheme) || slices.Contains(appSchemes, u.Scheme):
		if u.Opaque != "" {
			return "a private-use scheme's URI needs a path (com.example.app:/callback)"
		}
	default:
		return fmt.Sprintf("the %s scheme is not allowed: use https, http to a loopback address, or a private-use scheme in reverse-DNS form (com.example.app:/callback)", u.Scheme)
	}
	return ""
}

// isLoopback reports whether host, a URL's hostname, names the loopback
// interface exactly: 127.0.0.1, ::1 or localhost (not a name that merely
// begins with 127.).
func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// redirectRegistered reports whether uri is one of the client's redirect
// URIs: the same string, or, for http to a loopback address, the same
// but for the port, which a native app picks when it starts (RFC 8252
// §7.3).
func redirectRegistered(c store.OAuthClient, uri string) bool {
	if slices.Contains(c.RedirectURIs, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) || u.User != nil || strings.Contains(uri, "#") {
		return false
	}
	for _, reg := range c.RedirectURIs {
		r, err := url.Parse(reg)
		if err == nil && r.Scheme == "http" && r.Hostname() == u.Hostname() && r.EscapedPath() == u.EscapedPath() && r.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}
