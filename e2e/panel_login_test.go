package e2e_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Login CSRF against `legate serve`'s panel: a page of another site
// (Origin: null from a sandboxed frame, or no token of the victim's
// login page) posts the login form with the attacker's own token, to sign
// the victim's browser in to the attacker's session. Each is refused and
// no session starts; the victim's own login page signs in.
func TestServePanelLoginCSRF(t *testing.T) {
	binary(t) // legate serve and the CLI, no peer
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	panelURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	dir, state := t.TempDir(), t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("auth:\n  tokens: true\npanel:\n  listen: 127.0.0.1:%d\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := legateCLI(t, "token", "create", "mallory", "--role", "admin", "--config", config, "--state-dir", state)
	attacker := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	serveState(t, config, state)

	// browser opens the login page in a browser of its own: its client
	// and the CSRF token of the form it was given.
	browser := func() (*http.Client, string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		var resp *http.Response
		for range 50 { // the panel's listener starts beside the gateway's
			if resp, err = c.Get(panelURL + "/login"); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("the login page has no CSRF token: %s", b)
		}
		return c, html.UnescapeString(string(m[1]))
	}
	login := func(c *http.Client, origin string, form url.Values) (int, bool) {
		t.Helper()
		req, _ := http.NewRequest("POST", panelURL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, ck := range resp.Cookies() {
			if ck.Name == "legate_panel" && ck.Value != "" {
				return resp.StatusCode, true
			}
		}
		return resp.StatusCode, false
	}
	_, attackers := browser() // the token the attacker's own browser was given
	for name, c := range map[string]struct {
		origin string
		form   url.Values
	}{
		"no CSRF token":                        {panelURL, url.Values{"token": {attacker}}},
		"another browser's CSRF token":         {panelURL, url.Values{"token": {attacker}, "csrf": {attackers}}},
		"Origin: null, the victim's own token": {"null", nil},
		"another site's Origin":                {"https://evil.example", nil},
	} {
		victim, own := browser()
		form := c.form
		if form == nil {
			form = url.Values{"token": {attacker}, "csrf": {own}}
		}
		if status, session := login(victim, c.origin, form); status != http.StatusForbidden || session {
			t.Errorf("%s: %d, session %v; want 403 and no session", name, status, session)
		}
	}
	victim, own := browser()
	if status, session := login(victim, panelURL, url.Values{"token": {attacker}, "csrf": {own}}); status != http.StatusSeeOther || !session {
		t.Errorf("the login page's own form: %d, session %v; want 303 and a session", status, session)
	}
}
