package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
)

// alice's own profile, all, hides mail.boom; coding and mail are for it,
// private is not.
const narrowConfig = `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
  rules:
    - {principal: alice, tool: code.fail, action: deny}
auth: {tokens: true}
profiles:
  - {name: all, exclude: ["mail.boom"]}
  - {name: coding, include: ["code.*"], for: [all]}
  - {name: mail, include: ["mail.*"], for: [all]}
  - {name: private, include: ["mail.*"]}
connectors:
  - {id: code, type: echo-test}
  - {id: mail, type: echo-test}
`

// connectAt opens a session at url with bearer tok, header h added to
// each request.
func connectAt(t *testing.T, url, tok string, h http.Header) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	rt := http.RoundTripper(bearer{tok, http.DefaultTransport})
	if h != nil {
		rt = headers{h, rt}
	}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type headers struct {
	h    http.Header
	base http.RoundTripper
}

func (hs headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range hs.h {
		r.Header[k] = v
	}
	return hs.base.RoundTrip(r)
}

// postAs sends one JSON-RPC request to url as tok, on session sid if given
// (protocol 2025-11-25), else stateless (2026-07-28); it sends only
// tools/list.
func postAs(t *testing.T, url, tok, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	if sid != "" {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", sid)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// One principal, two clients on /mcp/coding and /mcp/mail: each sees only
// its profile's tools, a profile the principal may not use answers 403,
// and the policy and audit are the principal's (issue 32, done-when 5).
func TestOneURLPerToolset(t *testing.T) {
	g := servertest.Start(t, narrowConfig)
	tok := g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser, Profile: "all"})
	coding := connectAt(t, g.URL+"/mcp/coding", tok, nil)
	mail := connectAt(t, g.URL+"/mcp/mail", tok, nil)
	if got, want := names(t, coding), []string{"code__boom", "code__echo", "code__fail"}; !slices.Equal(got, want) {
		t.Errorf("/mcp/coding lists %v, want %v", got, want)
	}
	// Never more than alice's own view: mail.boom stays hidden.
	if got, want := names(t, mail), []string{"mail__echo", "mail__fail"}; !slices.Equal(got, want) {
		t.Errorf("/mcp/mail lists %v, want %v", got, want)
	}
	if _, err := coding.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__echo", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a mail tool called on /mcp/coding: %v", err)
	}
	res, err := coding.CallTool(context.Background(), &mcp.CallToolParams{Name: "code__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("code__echo on /mcp/coding: %v %v", res, err)
	}
	if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), `"principal":"alice"`) {
		t.Errorf("code__echo ran as %s, want alice", b)
	}
	// alice's policy holds on a narrowed URL.
	if res, err := coding.CallTool(context.Background(), &mcp.CallToolParams{Name: "code__fail", Arguments: map[string]any{"text": "x"}}); err != nil || !res.IsError {
		t.Errorf("code__fail, denied to alice, answered %v %v", res, err)
	}
	if res, err := mail.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail__echo", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError {
		t.Fatalf("mail__echo on /mcp/mail: %v %v", res, err)
	}
	// Both clients' calls are alice's in the audit, each row naming the
	// profile whose URL it came through.
	var rows []store.AuditRow
	waitFor(t, "the audit rows of alice's calls", func() bool {
		rows, _ = g.Store.Audit().Query(context.Background(), store.AuditQuery{Principal: "alice"})
		return len(rows) >= 3
	})
	row := func(tool, decision, outcome, profile string) bool {
		return slices.ContainsFunc(rows, func(r store.AuditRow) bool {
			return r.Tool == tool && r.Decision == decision && r.Outcome == outcome && r.Profile == profile
		})
	}
	if !row("code.echo", "allow", "ok", "coding") || !row("code.fail", "deny", "POLICY_DENIED", "coding") || !row("mail.echo", "allow", "ok", "mail") {
		t.Errorf("alice's audit rows: %+v", rows)
	}

	// The header form on /mcp.
	viaHeader := connectAt(t, g.URL+"/mcp", tok, http.Header{"Mcp-Legate-Profile": {"mail"}})
	if got, want := names(t, viaHeader), []string{"mail__echo", "mail__fail"}; !slices.Equal(got, want) {
		t.Errorf("/mcp with Mcp-Legate-Profile: mail lists %v, want %v", got, want)
	}

	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if status, body := postAs(t, g.URL+"/mcp/private", tok, "", list); status != http.StatusForbidden || !strings.Contains(body, `profile \"private\" is not for callers of profile \"all\"`) {
		t.Errorf("/mcp/private: %d %s, want 403 naming the profiles", status, body)
	}
	if status, body := postAs(t, g.URL+"/mcp/nope", tok, "", list); status != http.StatusNotFound || !strings.Contains(body, `no profile is named \"nope\"`) {
		t.Errorf("/mcp/nope: %d %s, want 404", status, body)
	}
	// A stateless request narrows as a session does.
	stateless := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if status, body := postAs(t, g.URL+"/mcp/mail", tok, "", stateless); status != http.StatusOK || !strings.Contains(body, "mail__echo") || strings.Contains(body, "code__echo") || strings.Contains(body, "mail__boom") {
		t.Errorf("stateless tools/list on /mcp/mail: %d %s", status, body)
	}
	// A session opened on /mcp/coding answers nowhere else.
	for _, url := range []string{g.URL + "/mcp/mail", g.URL + "/mcp"} {
		if status, body := postAs(t, url, tok, coding.ID(), list); status != http.StatusForbidden {
			t.Errorf("%s with /mcp/coding's session: %d %s, want 403", url, status, body)
		}
	}
	if status, body := postAs(t, g.URL+"/mcp/coding", tok, coding.ID(), list); status != http.StatusOK || !strings.Contains(body, "code__echo") {
		t.Errorf("/mcp/coding with its own session: %d %s", status, body)
	}
}

func TestOneURLPerToolsetWithoutAuthentication(t *testing.T) {
	g := servertest.Start(t, strings.Replace(narrowConfig, "auth: {tokens: true}\n", "", 1))
	// The local caller has no profile: it may narrow to any, private too.
	private := connectAt(t, g.URL+"/mcp/private", "", nil)
	if got, want := names(t, private), []string{"mail__boom", "mail__echo", "mail__fail"}; !slices.Equal(got, want) {
		t.Errorf("/mcp/private lists %v, want %v", got, want)
	}
	// Its session stays on its URL.
	if status, body := postAs(t, g.URL+"/mcp", "", private.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); status != http.StatusForbidden {
		t.Errorf("/mcp with /mcp/private's session: %d %s, want 403", status, body)
	}
}

// The panel's Tools page names each profile's URL.
func TestPanelListsProfileURLs(t *testing.T) {
	g := servertest.Start(t, narrowConfig)
	c, base, _ := panelClient(t, g.GW, g.Token(t, auth.Principal{Name: "root", Role: auth.RoleAdmin}))
	resp, err := c.Get(base + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	for _, want := range []string{"<code>http://127.0.0.1:0/mcp/coding</code>", `<a href="/tools?profile=mail">mail</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s on the Tools page: %s", want, page)
		}
	}
}

// Prompts and resources are narrowed as tools are: by the profile's
// connectors and include globs, on its own URL and on a narrowed one.
func TestProfileNarrowsPromptsAndResources(t *testing.T) {
	_, _, docsURL := passthroughUpstream(t, "docs")
	_, _, notesURL := passthroughUpstream(t, "notes")
	g := servertest.Start(t, fmt.Sprintf(`
auth: {tokens: true}
profiles:
  - {name: all}
  - {name: docs, connectors: [{name: docs}], for: [all]}
  - {name: notes, include: ["mcp.notes.*"], for: [all]}
upstreams:
  - {id: docs, url: %q}
  - {id: notes, url: %q}
`, docsURL, notesURL))
	ctx := context.Background()
	alice := g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser, Profile: "all"})
	bob := g.Token(t, auth.Principal{Name: "bob", Role: auth.RoleUser, Profile: "docs"})
	for _, c := range []struct {
		name, url, tok, own, other string
	}{
		{"alice at /mcp", "/mcp", alice, "", ""},
		{"alice at /mcp/docs", "/mcp/docs", alice, "docs", "notes"},
		{"alice at /mcp/notes", "/mcp/notes", alice, "notes", "docs"},
		{"bob, of docs, at /mcp", "/mcp", bob, "docs", "notes"},
	} {
		cs := connectAt(t, g.URL+c.url, c.tok, nil)
		var prompts, resources, templates []string
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: prompts/list: %v", c.name, err)
			}
			prompts = append(prompts, p.Name)
		}
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: resources/list: %v", c.name, err)
			}
			resources = append(resources, r.URI)
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: resources/templates/list: %v", c.name, err)
			}
			templates = append(templates, r.URITemplate)
		}
		slices.Sort(prompts)
		slices.Sort(resources)
		slices.Sort(templates)
		wantPrompts, wantResources, wantTemplates := []string{"mcp__docs__greet", "mcp__notes__greet"}, []string{"test://docs/doc", "test://notes/doc"}, []string{"test://docs/items/{id}", "test://notes/items/{id}"}
		if c.own != "" {
			wantPrompts, wantResources, wantTemplates = []string{"mcp__" + c.own + "__greet"}, []string{"test://" + c.own + "/doc"}, []string{"test://" + c.own + "/items/{id}"}
		}
		if !slices.Equal(prompts, wantPrompts) || !slices.Equal(resources, wantResources) || !slices.Equal(templates, wantTemplates) {
			t.Errorf("%s sees prompts %v, resources %v, templates %v; want %v, %v, %v", c.name, prompts, resources, templates, wantPrompts, wantResources, wantTemplates)
		}
		if c.own == "" {
			continue
		}
		if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://" + c.own + "/doc"}); err != nil || res.Contents[0].Text != "doc of "+c.own {
			t.Errorf("%s reads its own resource: %v %v", c.name, res, err)
		}
		if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://" + c.other + "/doc"}); err == nil {
			t.Errorf("%s read %s's resource: %v", c.name, c.other, res.Contents[0].Text)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__" + c.other + "__greet"}); err == nil || !strings.Contains(err.Error(), "unknown prompt") {
			t.Errorf("%s got %s's prompt: %v, want unknown prompt", c.name, c.other, err)
		}
		if res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__" + c.own + "__greet"}); err != nil || !strings.Contains(res.Messages[0].Content.(*mcp.TextContent).Text, "hello from "+c.own) {
			t.Errorf("%s gets its own prompt: %v %v", c.name, res, err)
		}
	}
}

// A client pointed at a profile's URL finds that URL's protected resource
// metadata (RFC 9728): the 401 names it, and it names the URL as the
// resource, with Legate's authorization server.
func TestProfileURLOAuthDiscovery(t *testing.T) {
	g := servertest.Start(t, strings.Replace(narrowConfig, "auth: {tokens: true}", `auth: {tokens: true, resource: "${GATEWAY_URL}/mcp", oauth_server: {}}`, 1))
	for _, c := range []struct{ path, metadata, resource string }{
		{"/mcp", g.URL + "/.well-known/oauth-protected-resource", g.URL + "/mcp"},
		{"/mcp/coding", g.URL + "/.well-known/oauth-protected-resource/mcp/coding", g.URL + "/mcp/coding"},
	} {
		status, _ := postAs(t, g.URL+c.path, "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if status != http.StatusUnauthorized {
			t.Fatalf("%s without a token: %d, want 401", c.path, status)
		}
		req, _ := http.NewRequest("POST", g.URL+c.path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer nope")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got, want := res.Header.Get("WWW-Authenticate"), `Bearer resource_metadata="`+c.metadata+`", error="invalid_token"`; got != want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", c.path, got, want)
		}
		res, err = http.Get(c.metadata)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != http.StatusOK || m.Resource != c.resource || !slices.Equal(m.AuthorizationServers, []string{g.URL}) {
			t.Errorf("%s: %d %+v %v, want resource %s", c.metadata, res.StatusCode, m, err, c.resource)
		}
		res.Body.Close()
	}
	// The metadata tells no one which profiles exist: an unknown name's URL
	// has metadata too, and is refused once its caller is authenticated.
	known, err := http.Get(g.URL + "/.well-known/oauth-protected-resource/mcp/coding")
	if err != nil {
		t.Fatal(err)
	}
	unknown, err := http.Get(g.URL + "/.well-known/oauth-protected-resource/mcp/nope")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := io.ReadAll(known.Body)
	ub, _ := io.ReadAll(unknown.Body)
	known.Body.Close()
	unknown.Body.Close()
	if unknown.StatusCode != known.StatusCode || !bytes.Equal(bytes.ReplaceAll(ub, []byte("/mcp/nope"), []byte("/mcp/coding")), kb) {
		t.Errorf("an unknown profile's metadata differs from a known one's but for its name: %d %s against %d %s", unknown.StatusCode, ub, known.StatusCode, kb)
	}
}

// A profile's named connectors entry picks the instance's credential set
// its callers' calls use: at the profile's URL, and for callers of that
// profile; elsewhere the instance's credentials.
func TestProfileCredentialsName(t *testing.T) {
	t.Setenv("LEGATE_NARROW_KEY", "base")
	t.Setenv("LEGATE_NARROW_TEAM_KEY", "team-key-c4n4ry-71f")
	g := servertest.Start(t, `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
auth: {tokens: true}
profiles:
  - {name: all}
  - {name: team, connectors: [{name: code, credentials_name: team}], for: [all]}
  - {name: plain, connectors: [{name: code}], for: [team]}
connectors:
  - id: code
    type: echo-test
    credentials: {key: {env: LEGATE_NARROW_KEY}}
    credential_sets:
      team: {key: {env: LEGATE_NARROW_TEAM_KEY}}
`)
	alice := g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser, Profile: "all"})
	bob := g.Token(t, auth.Principal{Name: "bob", Role: auth.RoleUser, Profile: "team"})
	// A credential set's values are masked as credentials' are, before any
	// call has used them.
	cs := connectAt(t, g.URL+"/mcp", alice, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "code__echo", Arguments: map[string]any{"text": "team-key-c4n4ry-71f"}})
	if b, _ := json.Marshal(res); err != nil || strings.Contains(string(b), "team-key-c4n4ry-71f") {
		t.Errorf("a credential set's value in a result: %s %v", b, err)
	}
	for _, c := range []struct {
		name, url, tok string
		keyLen         int
	}{
		{"alice at /mcp", "/mcp", alice, len("base")},
		{"alice at /mcp/team", "/mcp/team", alice, len("team-key-c4n4ry-71f")},
		{"bob, of team, at /mcp", "/mcp", bob, len("team-key-c4n4ry-71f")},
		// plain names code without a set: its URL's entry wins over bob's own.
		{"bob at /mcp/plain", "/mcp/plain", bob, len("base")},
	} {
		cs := connectAt(t, g.URL+c.url, c.tok, nil)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "code__echo", Arguments: map[string]any{"text": "x"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: code__echo: %v %v", c.name, res, err)
		}
		var out struct {
			KeyLen int `json:"key_len"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &out); out.KeyLen != c.keyLen {
			t.Errorf("%s: the call's key is %d bytes long, want %d", c.name, out.KeyLen, c.keyLen)
		}
	}
}

// A call held for approval records its profile and credential set: run
// by the executor after its client stopped waiting, it uses that set, and
// its audit row names that profile.
func TestHeldCallKeepsItsCredentialSet(t *testing.T) {
	t.Setenv("LEGATE_NARROW_KEY", "base")
	t.Setenv("LEGATE_NARROW_TEAM_KEY", "the team's key")
	g := servertest.Start(t, `
policy:
  defaults: {read: approve, draft: allow, write: allow, destructive: allow}
approvals: {wait: 10ms}
auth: {tokens: true}
profiles:
  - {name: all}
  - {name: team, connectors: [{name: code, credentials_name: team}], for: [all]}
connectors:
  - id: code
    type: echo-test
    credentials: {key: {env: LEGATE_NARROW_KEY}}
    credential_sets:
      team: {key: {env: LEGATE_NARROW_TEAM_KEY}}
`)
	ctx := context.Background()
	alice := g.Token(t, auth.Principal{Name: "alice", Role: auth.RoleUser, Profile: "all"})
	cs := connectAt(t, g.URL+"/mcp/team", alice, nil)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "code__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	code, id := errorCode(t, res)
	if code != "APPROVAL_PENDING" {
		t.Fatalf("code__echo answered %s, want APPROVAL_PENDING", code)
	}
	if a, err := g.Store.Approvals().Get(ctx, id); err != nil || a.Profile != "team" || a.CredentialSet != "team" {
		t.Fatalf("the approval request: %+v %v, want profile and credential set team", a, err)
	}
	if _, err := g.GW.Decide(ctx, id, true, "bob", ""); err != nil {
		t.Fatal(err)
	}
	var a *store.Approval
	waitFor(t, "the executor's run", func() bool {
		a, _ = g.Store.Approvals().Get(ctx, id)
		return a != nil && a.State == store.StateExecuted
	})
	if !strings.Contains(string(a.Outcome), fmt.Sprintf(`"key_len":%d`, len("the team's key"))) {
		t.Errorf("the executor ran it with another key: %s", a.Outcome)
	}
	waitFor(t, "the run's audit row", func() bool {
		rows, _ := g.Store.Audit().Query(ctx, store.AuditQuery{Tool: "code.echo"})
		return slices.ContainsFunc(rows, func(r store.AuditRow) bool { return r.ApprovalID == id && r.Outcome == "ok" && r.Profile == "team" })
	})
}
