package oauth_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/legate-mcp/legate/auth/oauth"
)

// TestRedirectURIsAccepted: https, loopback http named exactly, and a
// private-use scheme in reverse-DNS form are registered.
func TestRedirectURIsAccepted(t *testing.T) {
	h := newHarness(t)
	for _, u := range []string{"https://client.example/cb", "http://127.0.0.1:33418/cb", "http://[::1]:8080/cb", "http://localhost/cb",
		"com.example.app:/oauth2redirect", "cursor://anysphere.cursor-mcp/oauth/callback"} {
		h.register(u)
	}
}

// TestNoErrorRedirectBeforeValidation: an authorization request whose
// client, redirect_uri or PKCE does not check out gets an error page,
// never a redirect to the redirect_uri it names.
func TestNoErrorRedirectBeforeValidation(t *testing.T) {
	h := newHarness(t)
	evil := "https://evil.example/cb"
	client := h.register(evil)
	loopback := h.register("http://127.0.0.1:33418/callback")
	for name, q := range map[string]url.Values{
		"no PKCE":               {"response_type": {"code"}, "client_id": {client}, "redirect_uri": {evil}, "state": {"s"}},
		"plain PKCE":            {"response_type": {"code"}, "client_id": {client}, "redirect_uri": {evil}, "code_challenge": {verifier}, "code_challenge_method": {"plain"}},
		"unknown client":        {"response_type": {"code"}, "client_id": {"lgc_nobody"}, "redirect_uri": {evil}, "code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}},
		"no client":             {"response_type": {"code"}, "redirect_uri": {evil}},
		"another redirect":      {"response_type": {"code"}, "client_id": {client}, "redirect_uri": {evil + "/x"}, "code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}},
		"another loopback host": {"response_type": {"code"}, "client_id": {loopback}, "redirect_uri": {"http://localhost:33418/callback"}, "code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}},
		"response type token":   {"response_type": {"token"}, "client_id": {client}, "redirect_uri": {evil}, "code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}},
	} {
		resp, err := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc, _ := resp.Location(); loc != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d to %v, want 400 without a redirect", name, resp.StatusCode, loc)
		}
	}
	// A loopback redirect on another port is the registered one (RFC 8252 §7.3).
	h.start(h.browser(), h.authorizeQuery(loopback, "http://127.0.0.1:5000/callback", verifier))
}
