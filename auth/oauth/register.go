package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/legate-mcp/legate/auth/oauth/limits"
	"github.com/legate-mcp/legate/auth/oauth/redirecturi"
	"github.com/legate-mcp/legate/store"
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
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limits.MaxRegistrationBody))
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
	if wait := s.registerLimit.Allow(limits.Source(r), now); wait > 0 {
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
	if len(req.ClientName) > limits.MaxClientNameLen || strings.IndexFunc(req.ClientName, unicode.IsControl) >= 0 {
		return "invalid_client_metadata", fmt.Sprintf("client_name: at most %d characters, no control characters", limits.MaxClientNameLen)
	}
	if len(req.RedirectURIs) == 0 || len(req.RedirectURIs) > limits.MaxRedirectURIs {
		return "invalid_redirect_uri", fmt.Sprintf("redirect_uris: give 1 to %d", limits.MaxRedirectURIs)
	}
	for _, u := range req.RedirectURIs {
		if msg := redirecturi.Check(u); msg != "" {
			return "invalid_redirect_uri", fmt.Sprintf("redirect URI %q: %s", u, msg)
		}
	}
	req.RedirectURIs = slices.Compact(req.RedirectURIs)
	return "", ""
}
