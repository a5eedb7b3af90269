package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

// A per-user connection cannot be bound to another person's provider
// account through a real `legate serve`: mallory (the attacker) starts
// a consent of her own and gives its provider URL to alice (the victim),
// who is signed in at the provider; alice's browser comes back to
// Legate's callback, which refuses it ("started in another browser"),
// and nothing is connected for mallory. The link mallory could pass on
// instead (connect_url) opens a page that names mallory, not alice. In
// mallory's own browser her consent completes, once: the same state
// brought back again is refused.
func TestConnectIsBoundToTheBrowser(t *testing.T) {
	binary(t) // legate serve and the CLI, no peer
	provider := oauthtest.New("e2e-client", "e2e-secret", "xoxp-")
	prov := oauthtest.Serve(t, provider)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	config := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`auth:
  tokens: true
  resource: %s/mcp
connectors:
  - id: slack
    type: slack
    credentials_mode: per_user
    oauth:
      client_id: e2e-client
      client_secret: {env: E2E_SLACK_SECRET}
      authorize_url: %s/oauth/authorize
      token_url: %s/oauth/token
`, base, prov, prov)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	tokens := map[string]string{}
	for who, args := range map[string][]string{
		"mallory": {"--role", "approver", "--tenant", "acme"},
		"alice":   {"--role", "approver", "--tenant", "acme"},
		"root":    {"--role", "admin"},
	} {
		out := legateCLI(t, append([]string{"token", "create", who, "--config", config, "--state-dir", state}, args...)...)
		tokens[who] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	if _, err := startServeAt(t, config, state, []string{"E2E_SLACK_SECRET=e2e-secret"}, port); err != nil {
		t.Fatal(err)
	}
	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar}
	}
	malloryBrowser, aliceBrowser := browser(), browser()

	// mallory starts a consent of her own account, as her browser's page
	// of the gateway would.
	req, _ := http.NewRequest("POST", base+"/admin/v1/connections/slack/connect", nil)
	req.Header.Set("Authorization", "Bearer "+tokens["mallory"])
	res, err := malloryBrowser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		URL        string `json:"url"`
		ConnectURL string `json:"connect_url"`
	}
	err = json.NewDecoder(res.Body).Decode(&started)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(started.URL, prov+"/oauth/authorize?") {
		t.Fatalf("mallory starting a consent: %s %v %+v", res.Status, err, started)
	}
	callback, _ := url.Parse(base + "/connect/callback")
	kept := malloryBrowser.Jar.Cookies(callback)

	// alice's browser, given the provider's URL, approves as alice.
	status, page := follow(t, aliceBrowser, started.URL, "alice-account")
	if status == http.StatusOK || strings.Contains(page, "is connected") || !strings.Contains(page, "started in another browser") {
		t.Errorf("mallory's consent in alice's browser: %d: %s", status, page)
	}
	if got := connectionsOf(t, base, tokens["root"]); strings.Contains(got, `"principal":"mallory"`) {
		t.Fatalf("alice's account was connected for mallory: %s", got)
	}

	// The link mallory could give instead names mallory.
	res, err = aliceBrowser.Get(started.ConnectURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), `<span id="principal">mallory</span>`) || strings.Contains(string(b), "alice") {
		t.Errorf("the link mallory was given, opened by alice: %s: %s", res.Status, b)
	}

	// In mallory's own browser, her consent completes, for her.
	status, page = follow(t, malloryBrowser, started.URL, "mallory-account")
	if status != http.StatusOK || !strings.Contains(page, "slack is connected for mallory (tenant acme)") {
		t.Fatalf("mallory's consent in her own browser: %d: %s", status, page)
	}
	if got := connectionsOf(t, base, tokens["root"]); !strings.Contains(got, `"principal":"mallory"`) {
		t.Fatalf("mallory's connection is not listed: %s", got)
	}

	// The same state again, with the cookie put back: refused.
	malloryBrowser.Jar.SetCookies(callback, kept)
	if status, page = follow(t, malloryBrowser, started.URL, "mallory-account"); status == http.StatusOK || !strings.Contains(page, "used already") {
		t.Errorf("a replayed state: %d: %s", status, page)
	}
}

// follow opens a provider's consent URL in c, approving as account, and
// follows it back to Legate's callback; it returns the last page.
func follow(t *testing.T, c *http.Client, consent, account string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", consent, nil)
	req.Header.Set(oauthtest.UserHeader, account)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Request.URL.Path != "/connect/callback" {
		t.Fatalf("the consent did not come back to Legate's callback: %s at %s", res.Status, res.Request.URL)
	}
	return res.StatusCode, string(b)
}

// connectionsOf is GET /admin/v1/connections, as the admin of tok.
func connectionsOf(t *testing.T, base, tok string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/admin/v1/connections", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/v1/connections: %s: %s", res.Status, b)
	}
	var compact bytes.Buffer // the checks read "key":"value"
	if err := json.Compact(&compact, b); err != nil {
		t.Fatalf("GET /admin/v1/connections: not JSON: %s", b)
	}
	return compact.String()
}
