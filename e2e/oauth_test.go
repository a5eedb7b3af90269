package e2e_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/internal/syncbuf"
)

const oauthPassword = "alice's long password"

// oauthLegate serves Legate with its authorization server on a free
// port and the user alice; it returns the server, its state dir and
// config.
func oauthLegate(t *testing.T) (*server, string, string) { return oauthLegateWith(t, "") }

// oauthLegateWith is oauthLegate with extra appended to the config.
func oauthLegateWith(t *testing.T, extra string) (*server, string, string) {
	t.Helper()
	state := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	issuer := fmt.Sprintf("http://127.0.0.1:%d", port)
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("auth:\n  resource: "+issuer+"/mcp\n  oauth_server: {}\n"+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	add := exec.Command(legateBin, "user", "add", "alice", "--role", "user", "--state-dir", state, "--config", config)
	add.Stdin = strings.NewReader(oauthPassword + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("legate user add: %v\n%s", err, out)
	}
	s, err := startServeAt(t, config, state, nil, port)
	if err != nil {
		t.Fatal(err)
	}
	return s, state, config
}

// runOAuthClient runs a node script (URL, callback port, tool) that
// prints an authorization URL of s on stderr; the scripted user agent
// logs in as alice and consents. It returns the script's stdout.
func runOAuthClient(t *testing.T, p *peerSet, s *server, script string) string {
	t.Helper()
	out, _ := runOAuthClientAt(t, p, s, script, s.url("127.0.0.1"))
	return out
}

// runOAuthClientAt is runOAuthClient given mcpURL; it also returns the
// authorization URL the user agent was sent to.
func runOAuthClientAt(t *testing.T, p *peerSet, s *server, script, mcpURL string) (string, string) {
	t.Helper()
	cbPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	scripts, _ := filepath.Abs("node")
	cmd := exec.CommandContext(ctx, p.node, filepath.Join(scripts, script), mcpURL, fmt.Sprint(cbPort), "http__request")
	cmd.Dir = t.TempDir()
	cmd.Env = p.environ("MCP_REMOTE_CONFIG_DIR=" + t.TempDir())
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout = &stdout
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	authURL := regexp.MustCompile(regexp.QuoteMeta("http://"+s.addr+"/oauth/authorize?") + `\S+`)
	loggedIn := make(chan error, 1)
	var sentTo string
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		started := false
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
			if u := authURL.FindString(sc.Text()); u != "" && !started {
				started, sentTo = true, u
				go func() { loggedIn <- logIn(u, "alice", oauthPassword) }()
			}
		}
		if !started {
			loggedIn <- fmt.Errorf("%s printed no authorization URL", script)
		}
	}()
	err = cmd.Wait()
	if lerr := <-loggedIn; lerr != nil {
		t.Fatalf("the user agent: %v\n%s:\n%s", lerr, script, stderr.String())
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
	}
	return stdout.String(), sentTo
}

// checkOAuthRun checks a script's output and that the audit row of its
// call and the grant name alice.
func checkOAuthRun(t *testing.T, out, state, config string) {
	t.Helper()
	var r struct {
		Tools   []string        `json:"tools"`
		Call    json.RawMessage `json:"call"`
		Refresh *bool           `json:"refresh"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil || !hasAll(r.Tools, "http__request") || len(r.Call) == 0 || (r.Refresh != nil && !*r.Refresh) {
		t.Fatalf("tools %v, call %s, refresh token %v (%v)", r.Tools, r.Call, r.Refresh, err)
	}
	// Audit rows are written in batches off the call path (every 200 ms):
	// the script may end before its call's row is.
	var audit []byte
	var err error
	waitFor(t, 10*time.Second, func() bool {
		audit, err = legateExec(t, nil, "audit", "query", "--tool", "http.request", "-o", "json", "--state-dir", state, "--config", config)
		return err == nil && strings.Contains(string(audit), `"principal": "alice"`)
	}, "the audit row of the call names alice")
	tokens, err := legateExec(t, nil, "token", "list", "--state-dir", state, "--config", config)
	if err != nil || !regexp.MustCompile(`oauth:\S+ \(alice\)`).Match(tokens) {
		t.Fatalf("token list shows alice's grant: %v\n%s", err, tokens)
	}
}

// TestOAuthMCPRemote: mcp-remote is given Legate's URL and nothing else.
// It finds the authorization server through the protected resource
// metadata, registers itself, and sends the user to log in; a scripted
// user agent logs in as alice and consents; mcp-remote takes the code at
// its callback, lists and calls tools, and the audit row names alice.
func TestOAuthMCPRemote(t *testing.T) {
	p := need(t)
	s, state, config := oauthLegate(t)
	checkOAuthRun(t, runOAuthClient(t, p, s, "oauth-remote.mjs"), state, config)
}

// TestOAuthSDKClient: the TypeScript SDK client's own OAuth provider
// runs the same flow and gets a refresh token too.
func TestOAuthSDKClient(t *testing.T) {
	p := need(t)
	s, state, config := oauthLegate(t)
	checkOAuthRun(t, runOAuthClient(t, p, s, "oauth-sdk.mjs"), state, config)
}

// TestOAuthSDKClientAtAProfileURL: the TypeScript SDK client given only
// a profile's URL, /mcp/coding, finds that URL's metadata from its 401,
// asks for a token for that URL (resource, RFC 8707), and with it sees
// the profile's tools; the token is refused at /mcp, for which it was not
// issued.
func TestOAuthSDKClientAtAProfileURL(t *testing.T) {
	p := need(t)
	s, state, config := oauthLegateWith(t, "profiles:\n  - {name: coding, include: [\"http.*\"]}\n")
	coding := s.url("127.0.0.1") + "/coding"
	out, sentTo := runOAuthClientAt(t, p, s, "oauth-sdk.mjs", coding)
	checkOAuthRun(t, out, state, config)
	if u, err := url.Parse(sentTo); err != nil || u.Query().Get("resource") != coding {
		t.Errorf("the client asked for a token for %q, want %s (%s)", u.Query().Get("resource"), coding, sentTo)
	}
	var r struct {
		Tools []string `json:"tools"`
		Token string   `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil || r.Token == "" {
		t.Fatalf("the script's output: %v %s", err, out)
	}
	for _, name := range r.Tools {
		if !strings.HasPrefix(name, "http__") {
			t.Errorf("/mcp/coding lists %s, outside the profile", name)
		}
	}
	list := func(at string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, at, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+r.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := list(coding); resp.StatusCode != http.StatusOK {
		t.Errorf("the token at /mcp/coding: %s", resp.Status)
	}
	if resp := list(s.url("127.0.0.1")); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("the token for /mcp/coding at /mcp: %s %q, want 401 invalid_token", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestOAuthMCPRemoteAtAProfileURL: mcp-remote given /mcp/coding alone
// signs in with a token for that URL and sees the profile's tools.
func TestOAuthMCPRemoteAtAProfileURL(t *testing.T) {
	p := need(t)
	s, state, config := oauthLegateWith(t, "profiles:\n  - {name: coding, include: [\"http.*\"]}\n")
	coding := s.url("127.0.0.1") + "/coding"
	out, sentTo := runOAuthClientAt(t, p, s, "oauth-remote.mjs", coding)
	checkOAuthRun(t, out, state, config)
	if u, err := url.Parse(sentTo); err != nil || u.Query().Get("resource") != coding {
		t.Errorf("mcp-remote asked for a token for %q, want %s (%s)", u.Query().Get("resource"), coding, sentTo)
	}
}

// logIn plays the browser: it opens the authorization URL, logs in,
// allows, and follows the redirects to the client's callback.
func logIn(authURL, user, password string) error {
	jar, _ := cookiejar.New(nil)
	return userAgent(&http.Client{Jar: jar, Timeout: 30 * time.Second}, authURL, user, password)
}

// userAgent drives b through the login and consent pages.
func userAgent(b *http.Client, authURL, user, password string) error {
	var page string
	get := func(resp *http.Response, err error) error {
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		page = string(body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s\n%s", resp.Request.URL, resp.Status, body)
		}
		return nil
	}
	hidden := regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`)
	fields := func() url.Values {
		v := url.Values{}
		for _, m := range hidden.FindAllStringSubmatch(page, -1) {
			v.Set(m[1], m[2])
		}
		return v
	}
	u, _ := url.Parse(authURL)
	origin := u.Scheme + "://" + u.Host
	if err := get(b.Get(authURL)); err != nil {
		return err
	}
	f := fields()
	f.Set("username", user)
	f.Set("password", password)
	if err := get(b.PostForm(origin+"/oauth/login", f)); err != nil {
		return err
	}
	if !strings.Contains(page, "Allow") {
		return fmt.Errorf("no consent page:\n%s", page)
	}
	f = fields()
	f.Set("decision", "allow")
	// The last redirect lands on the client's callback.
	return get(b.PostForm(origin+"/oauth/consent", f))
}

// TestOAuthTokensAtMCP: through the real /mcp, a token of Legate's own
// authorization server is accepted until its grant is revoked, then
// refused with invalid_token; so is a rotated refresh token used again.
func TestOAuthTokensAtMCP(t *testing.T) {
	need(t)
	s, state, config := oauthLegate(t)
	base := "http://" + s.addr
	post := func(path, ctype, body string) (int, map[string]any) {
		resp, err := http.Post(base+path, ctype, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	redirect := "http://127.0.0.1:1/cb"
	status, reg := post("/oauth/register", "application/json", `{"client_name":"e2e","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`)
	if status != http.StatusCreated {
		t.Fatalf("register: %d %v", status, reg)
	}
	client := reg["client_id"].(string)
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"s"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {s.url("127.0.0.1")}}
	code, err := logInForCode(base+"/oauth/authorize?"+q.Encode(), "alice", oauthPassword)
	if err != nil {
		t.Fatal(err)
	}
	status, tok := post("/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"authorization_code"}, "client_id": {client},
		"redirect_uri": {redirect}, "code": {code}, "code_verifier": {verifier}, "resource": {s.url("127.0.0.1")}}.Encode())
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, tok)
	}
	initialize := func(token string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, s.url("127.0.0.1"), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := initialize(tok["access_token"].(string)); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize with alice's access token: %s", resp.Status)
	}
	// Refresh rotates; the old refresh token used again ends the grant.
	refresh := func(rt string) (int, map[string]any) {
		return post("/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}}.Encode())
	}
	status, tok2 := refresh(tok["refresh_token"].(string))
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %v", status, tok2)
	}
	if status, e := refresh(tok["refresh_token"].(string)); status != http.StatusBadRequest || e["error"] != "invalid_grant" {
		t.Fatalf("a rotated refresh token reused: %d %v", status, e)
	}
	resp := initialize(tok2["access_token"].(string))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("an access token of a grant ended by reuse: %s %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	if out, err := legateExec(t, nil, "token", "list", "--state-dir", state, "--config", config); err != nil || strings.Contains(string(out), "oauth:") {
		t.Fatalf("token list after the grant ended: %v\n%s", err, out)
	}
}

// logInForCode logs in and allows like logIn, and returns the code the
// client's redirect carries instead of following it.
func logInForCode(authURL, user, password string) (string, error) {
	var code string
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if c := req.URL.Query().Get("code"); c != "" {
			code = c
			return http.ErrUseLastResponse
		}
		return nil
	}}
	if err := userAgent(b, authURL, user, password); err != nil && code == "" {
		return "", err
	}
	if code == "" {
		return "", fmt.Errorf("no code came back")
	}
	return code, nil
}
