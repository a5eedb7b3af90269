package slack_test

// Per-user connections through the whole gateway (issue 21, done-when 1,
// 2 and 5): people connect the same Slack instance with their own
// accounts of the stand-in through the real consent flow over HTTP, and
// each call reaches Slack with the caller's token alone.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/panel"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
)

type perUserEnv struct {
	t     *testing.T
	slack *standin
	g     *servertest.Gateway
	mu    sync.Mutex
	said  []string // every answer Legate gave: results, errors, pages
}

func newPerUserEnv(t *testing.T) *perUserEnv {
	t.Helper()
	s := newStandin(t, 2)
	t.Setenv("PERUSER_SLACK_CLIENT_SECRET", standinClientSecret)
	g := servertest.Start(t, `
auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
profiles:
  - {name: everything, connectors: [{all: true}]}
  - {name: never-asked, auto_auth: false}
connectors:
  - type: slack
    credentials_mode: per_user
    config: {api_url: "`+s.url()+`", allow_private_networks: true, retry_backoff: 1ms}
    oauth:
      client_id: "`+standinClientID+`"
      client_secret: {env: PERUSER_SLACK_CLIENT_SECRET}
      scopes: [channels:read, channels:history, chat:write]
      authorize_url: "`+s.oauthURL()+`/authorize"
      token_url: "`+s.oauthURL()+`/token"
      revoke_url: "`+s.oauthURL()+`/revoke"
policy:
  rules:
    - {tool: "slack.post_message", action: allow}
`)
	return &perUserEnv{t: t, slack: s, g: g}
}

// say records an answer Legate gave.
func (e *perUserEnv) say(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.said = append(e.said, s)
}

// principal makes a bearer token for a principal of tenant acme.
func (e *perUserEnv) principal(name, profile string) string {
	e.t.Helper()
	return e.g.Token(e.t, auth.Principal{Name: name, Role: auth.RoleUser, Tenant: "acme", Profile: profile})
}

// connect runs the consent flow as the principal of bearer, approving at
// the stand-in as its account, following every redirect as a browser
// would.
func (e *perUserEnv) connect(bearer, account string) {
	e.t.Helper()
	if err := e.open(e.g.URL+"/connect/slack", bearer, account); err != nil {
		e.t.Fatal(err)
	}
}

// open opens a connect URL as the principal of bearer would in a browser
// signed in to Legate, approving at the stand-in as account.
func (e *perUserEnv) open(connectURL, bearer, account string) error {
	body, err := oauthtest.Connect(connectURL, bearer, account)
	e.say(body)
	return err
}

// session opens an MCP session as the principal of bearer.
func (e *perUserEnv) session(bearer string) *mcp.ClientSession {
	e.t.Helper()
	return e.client(bearer, nil, "")
}

// client opens an MCP session as the principal of bearer with a client of
// opts, speaking protocol version ("": the SDK's latest).
func (e *perUserEnv) client(bearer string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	e.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: oauthtest.WithBearer(bearer, http.DefaultTransport)}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return cs
}

// list calls slack.list_channels and returns the result's error code (""
// on success) and the whole result as JSON.
func (e *perUserEnv) list(cs *mcp.ClientSession) (string, map[string]any) {
	e.t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slack__list_channels", Arguments: map[string]any{}})
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	e.say(string(b))
	var out map[string]any
	json.Unmarshal(b, &out)
	sc, _ := out["structuredContent"].(map[string]any)
	if !res.IsError {
		return "", sc
	}
	ge, _ := sc["error"].(map[string]any)
	if ge == nil { // the tool declares an output schema: the error is in _meta
		ge, _ = res.Meta[server.ErrorMetaKey].(map[string]any)
	}
	code, _ := ge["code"].(string)
	return code, ge
}

// lastUser is the stand-in account whose token the last API call used.
func (e *perUserEnv) lastUser() string {
	b := e.slack.calledWith()
	if len(b) == 0 {
		return ""
	}
	return b[len(b)-1].user
}

func (e *perUserEnv) tools(cs *mcp.ClientSession) []string {
	e.t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestPerUserConnections(t *testing.T) {
	ctx := context.Background()
	e := newPerUserEnv(t)
	aliceTok, bobTok, carolTok := e.principal("alice", "everything"), e.principal("bob", "everything"), e.principal("carol", "")
	alice, bob, carol := e.session(aliceTok), e.session(bobTok), e.session(carolTok)

	// Nobody is connected: all leaves slack out; named, a call says how to connect.
	if slices.Contains(e.tools(alice), "slack__list_channels") {
		t.Fatalf("alice's all set holds slack before she connected it: %v", e.tools(alice))
	}
	code, details := e.list(carol)
	if code != "NOT_CONNECTED" || !strings.Contains(details["message"].(string), "legate connect slack") || details["connect_url"] != e.g.URL+"/connect/slack" {
		t.Fatalf("an unconnected caller got %s %v", code, details)
	}
	if n := len(e.slack.calledWith()); n != 0 {
		t.Fatalf("Slack was called %d times without a connection", n)
	}

	e.connect(aliceTok, "alice-slack")
	e.connect(bobTok, "bob-slack")
	if !slices.Contains(e.tools(alice), "slack__list_channels") || !slices.Contains(e.tools(bob), "slack__list_channels") {
		t.Fatalf("connected, slack is still out of the all set: %v", e.tools(alice))
	}
	if code, _ := e.list(alice); code != "" || e.lastUser() != "alice-slack" {
		t.Fatalf("alice's call: %q, reached Slack as %q", code, e.lastUser())
	}
	if code, _ := e.list(bob); code != "" || e.lastUser() != "bob-slack" {
		t.Fatalf("bob's call: %q, reached Slack as %q", code, e.lastUser())
	}
	if code, _ := e.list(carol); code != "NOT_CONNECTED" {
		t.Fatalf("carol used someone's connection: %q", code)
	}
	list, err := server.ConnectionsOf(e.g.GW).List(ctx, connections.Filter{})
	if err != nil || len(list) != 2 || list[0].Principal != "alice" || list[1].Principal != "bob" || list[0].Status != "connected" || list[0].Tenant != "acme" {
		t.Fatalf("connections %+v, %v", list, err)
	}

	// The admin API lists them, never a token.
	rootTok, err := auth.CreateToken(ctx, e.g.Store.Tokens(), auth.Principal{Name: "ops", Role: auth.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.g.URL+"/admin/v1/connections", nil)
	req.Header.Set("Authorization", "Bearer "+rootTok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	e.say(string(raw))
	var compact bytes.Buffer
	json.Compact(&compact, raw)
	body := compact.Bytes()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"principal":"alice"`) || !strings.Contains(string(body), `"principal":"bob"`) {
		t.Fatalf("admin list: %d %s", res.StatusCode, body)
	}

	// A token that expires at Slack is refreshed once and the call succeeds.
	e.slack.oauth.Expire("alice-slack")
	if code, _ := e.list(alice); code != "" || e.lastUser() != "alice-slack" || e.slack.oauth.Refreshes() != 1 {
		t.Fatalf("after expiry: %q as %q, %d refreshes", code, e.lastUser(), e.slack.oauth.Refreshes())
	}
	if code, _ := e.list(bob); code != "" || e.lastUser() != "bob-slack" {
		t.Fatalf("bob after alice's refresh: %q as %q", code, e.lastUser())
	}

	// Revoking bob disconnects bob alone, at Slack too.
	revoked := len(e.slack.oauth.Revoked())
	req, _ = http.NewRequest("DELETE", e.g.URL+"/admin/v1/connections/slack?tenant=acme&principal=bob", nil)
	req.Header.Set("Authorization", "Bearer "+rootTok)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking bob: %v %v", res, err)
	}
	if got := len(e.slack.oauth.Revoked()); got != revoked+2 {
		t.Fatalf("Slack revoked %d tokens; want bob's access and refresh tokens", got-revoked)
	}
	if slices.Contains(e.tools(bob), "slack__list_channels") {
		t.Fatalf("bob's all set holds slack after his connection was revoked")
	}
	if info, ok, err := server.ConnectionsOf(e.g.GW).Get(ctx, "acme", "bob", "slack"); ok || err != nil {
		t.Fatalf("bob's connection after revoking: %+v %v", info, err)
	}
	if code, _ := e.list(alice); code != "" || e.lastUser() != "alice-slack" {
		t.Fatalf("alice after bob's revocation: %q as %q", code, e.lastUser())
	}

	// A refresh the provider refuses marks the connection expired: the
	// call says so, and slack leaves alice's all set.
	e.slack.oauth.FailRefresh(true)
	e.slack.oauth.Expire("alice-slack")
	if code, details := e.list(alice); code != "NOT_CONNECTED" || !strings.Contains(details["message"].(string), "expired") {
		t.Fatalf("a refused refresh: %q %v", code, details)
	}
	if info, ok, err := server.ConnectionsOf(e.g.GW).Get(ctx, "acme", "alice", "slack"); err != nil || !ok || info.Status != connections.StatusExpired {
		t.Fatalf("alice's connection after a refused refresh: %+v %v %v", info, ok, err)
	}
	if slices.Contains(e.tools(alice), "slack__list_channels") {
		t.Fatalf("an expired connection is still in alice's all set")
	}
	// Connecting again brings it back.
	e.slack.oauth.FailRefresh(false)
	e.connect(aliceTok, "alice-slack")
	if code, _ := e.list(alice); code != "" || e.lastUser() != "alice-slack" {
		t.Fatalf("alice reconnected: %q as %q", code, e.lastUser())
	}

	// The panel lists them and revokes one as the admin API does.
	ps := httptest.NewServer(panel.New(server.AdminHandler(e.g.GW, "127.0.0.1:0"), &panel.Options{Loopback: true}))
	defer ps.Close()
	jar, _ := cookiejar.New(nil)
	pc := &http.Client{Jar: jar}
	if res := servertest.PanelLogin(t, pc, ps.URL, rootTok); res.StatusCode != 200 {
		t.Fatalf("panel login: %v", res.Status)
	} else {
		res.Body.Close()
	}
	res, err = pc.Get(ps.URL + "/connections")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	e.say(string(body))
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(body))
	if res.StatusCode != 200 || !strings.Contains(string(body), `id="conn-slack-alice"`) || strings.Contains(string(body), `id="conn-slack-bob"`) || csrf == nil {
		t.Fatalf("the panel's connections: %d\n%s", res.StatusCode, body)
	}
	res, err = pc.PostForm(ps.URL+"/connections/slack/revoke", url.Values{"csrf": {csrf[1]}, "principal": {"alice"}, "tenant": {"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "revoked the connection of alice to slack") || server.ConnectionsOf(e.g.GW).Connected(ctx, "acme", "alice", "slack") {
		t.Fatalf("revoking from the panel:\n%s", body)
	}

	// Canary: no per-user token, access or refresh, appears in anything
	// Legate said, logged, audited or stored in the clear.
	e.g.GW.Close() // flushes the audit log
	rows, err := e.g.Store.Audit().Query(ctx, store.AuditQuery{})
	if err != nil || len(rows) == 0 {
		t.Fatalf("audit rows: %d, %v", len(rows), err)
	}
	rowsJSON, _ := json.Marshal(rows)
	secrets, _ := e.g.Store.Secrets().List(ctx)
	var sealed []string
	for _, s := range secrets {
		row, err := e.g.Store.Secrets().Get(ctx, s.Tenant, s.Name, s.Version)
		if err != nil {
			t.Fatal(err)
		}
		sealed = append(sealed, string(row.Ciphertext), string(row.WrappedKey))
	}
	issued := e.slack.oauth.Issued()
	if len(issued) < 8 {
		t.Fatalf("the stand-in issued %d tokens", len(issued))
	}
	for _, tok := range issued {
		for where, text := range map[string]string{"answers": strings.Join(e.said, "\n"), "logs": e.g.Logs.String(), "audit rows": string(rowsJSON), "the store": strings.Join(sealed, "\n")} {
			if strings.Contains(text, tok) {
				t.Errorf("a per-user token appears in %s", where)
			}
		}
	}
}

// A per-user connection acts as the person: consent asks Slack for user
// scopes (user_scope, not the bot's scope), the connection keeps
// authed_user's token of oauth.v2.access's answer (never the bot's at its
// top), and a post made through it reaches chat.postMessage with the
// person's xoxp- token and is the person's.
func TestPerUserPostActsAsThePerson(t *testing.T) {
	e := newPerUserEnv(t)
	aliceTok := e.principal("alice", "everything")
	e.connect(aliceTok, "alice-slack")
	e.slack.mu.Lock()
	query := strings.Join(e.slack.authorize, "&")
	e.slack.mu.Unlock()
	q, _ := url.ParseQuery(query)
	if q.Get("user_scope") != "channels:read,channels:history,chat:write" || q.Get("scope") != "" {
		t.Fatalf("the consent asked scope=%q user_scope=%q; want the user scopes alone", q.Get("scope"), q.Get("user_scope"))
	}
	cs := e.session(aliceTok)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slack__post_message", Arguments: map[string]any{"channel": "#chan-1", "text": "from alice"}})
	if err != nil || res.IsError {
		b, _ := json.Marshal(res)
		t.Fatalf("post: %v %s", err, b)
	}
	var post bearer
	for _, b := range e.slack.calledWith() {
		if b.method == "chat.postMessage" {
			post = b
		}
	}
	if !strings.HasPrefix(post.token, "xoxp-") || post.user != "alice-slack" || post.token == botToken {
		t.Fatalf("chat.postMessage came with %q (user %q); want alice's xoxp- token", post.token, post.user)
	}
	e.slack.mu.Lock()
	msgs := e.slack.messages["C001"]
	e.slack.mu.Unlock()
	if len(msgs) != 1 || msgs[0].User != "UALICESLACK" || msgs[0].BotID != "" {
		t.Fatalf("Slack holds %+v; want alice's post", msgs)
	}
}
