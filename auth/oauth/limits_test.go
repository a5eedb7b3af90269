package oauth_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store/sqlite"
)

// TestAuthorizeParameterSizes: an authorization request's parameters are
// stored until it expires, so each is bounded; one too long is refused
// with 400 naming it and its limit, and nothing is stored.
func TestAuthorizeParameterSizes(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	for param, want := range map[string]string{
		"state":          "state is too long: at most 1024",
		"nonce":          "nonce is too long: at most 256",
		"code_challenge": "code_challenge is too long: at most 128",
		"scope":          "scope is too long: at most 256",
		"login_hint":     "login_hint is too long: at most 256",
		"x_other":        "too large: its parameters may hold at most 8192 bytes",
	} {
		q := h.authorizeQuery(client, redirect, verifier)
		q.Set(param, strings.Repeat("a", 400<<10))
		if param == "nonce" || param == "code_challenge" || param == "scope" {
			q.Set(param, strings.Repeat("a", 1500))
		}
		resp, err := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
			t.Errorf("%s too long: %d %s, want 400 saying %q", param, resp.StatusCode, body, want)
		}
	}
	if n, _ := h.st.OAuth().DeleteExpired(context.Background(), h.now.Add(time.Hour)); n != 0 {
		t.Fatalf("%d requests stored for refused authorizations", n)
	}
}

// TestAuthorizeIsLimitedPerSource: authorization requests from one
// address beyond its bucket's burst get 429 with Retry-After.
func TestAuthorizeIsLimitedPerSource(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	q := h.authorizeQuery(client, redirect, verifier)
	limited := 0
	for range 40 {
		resp, err := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "" {
			limited++
		}
	}
	if limited < 5 {
		t.Fatalf("40 authorization requests at once: %d refused, want the burst's excess", limited)
	}
	if resp, _ := h.browserFrom("127.0.0.2").Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode()); resp.StatusCode != http.StatusFound {
		t.Fatalf("another address: %d, want 302 to the login page", resp.StatusCode)
	}
}

// TestRegistrationIsLimited: registrations from one address beyond the
// burst get 429; a full client table makes room by deleting the clients
// that obtained no token within an authorization's lifetime, so filling
// it holds registration for minutes, not for unused_client_ttl.
func TestRegistrationIsLimited(t *testing.T) {
	h := newHarness(t)
	body := map[string]any{"redirect_uris": []string{"https://client.example/cb"}}
	limited := 0
	for range 15 {
		var out map[string]any
		if h.postJSON(oauth.RegisterPath, body, &out) == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited != 5 {
		t.Fatalf("15 registrations at once from one address: %d refused, want 5", limited)
	}

	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	srv, err := oauth.New(ctx, config.Auth{Resource: "http://127.0.0.1:1/mcp", OAuthServer: &config.OAuthServer{MaxClients: 3}}, oauth.Options{Store: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	register := func() int {
		req, _ := http.NewRequest(http.MethodPost, oauth.RegisterPath, strings.NewReader(`{"redirect_uris":["https://client.example/cb"]}`))
		req.RemoteAddr = "192.0.2.1:1234"
		w := &statusRecorder{header: http.Header{}}
		srv.Handler().ServeHTTP(w, req)
		return w.status
	}
	for i := range 3 {
		if got := register(); got != http.StatusCreated {
			t.Fatalf("registration %d: %d", i+1, got)
		}
	}
	if got := register(); got != http.StatusBadRequest {
		t.Fatalf("a fourth registration with max_clients 3: %d, want 400", got)
	}
	now = now.Add(11 * time.Minute)
	if got := register(); got != http.StatusCreated {
		t.Fatalf("a registration 11 minutes after the table filled: %d, want 201", got)
	}
}

type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return len(b), nil
}
func (r *statusRecorder) WriteHeader(s int) { r.status = s }
