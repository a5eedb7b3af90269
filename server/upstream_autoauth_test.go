package server_test

// auto_auth for an OAuth-protected upstream, through the whole gateway: a
// call to its tool by a principal who has not connected it (it is listed
// to them: list_before_connect), or whose connection expired, asks the
// user to open the connect URL, through URL-mode elicitation (2025-11-25)
// or an input_required result (2026-07-28); the user connects (here, the
// client's handler follows the URL as a browser signed in to Legate
// would) and the call goes on with that user's own token. A client that
// cannot be asked, or a profile with auto_auth: false, gets NOT_CONNECTED
// naming the URL.

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
)

// upAuthEnv is a gateway with one OAuth-protected upstream, secure,
// listed to principals who have not connected it.
type upAuthEnv struct {
	p *oauthtest.Provider
	g *servertest.Gateway
}

func newUpAuthEnv(t *testing.T) *upAuthEnv {
	t.Helper()
	up, p := oauthtest.ProtectedMCP(t)
	t.Setenv("UPAUTH_CLIENT_SECRET", "shh")
	g := servertest.Start(t, `
auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
profiles:
  - {name: never-asked, auto_auth: false}
upstreams:
  - id: secure
    url: "`+up+`"
    auth: oauth
    list_before_connect: true
    timeout: 2s
    oauth: {client_id: configured, client_secret: {env: UPAUTH_CLIENT_SECRET}, scopes: [tools]}
`)
	return &upAuthEnv{p: p, g: g}
}

// principal makes a bearer token for a principal of tenant acme.
func (e *upAuthEnv) principal(t *testing.T, name, profile string) string {
	t.Helper()
	return e.g.Token(t, auth.Principal{Name: name, Role: auth.RoleUser, Tenant: "acme", Profile: profile})
}

// client opens an MCP client of opts as the principal of bearer, speaking
// protocol version; a session's is known to the HTTP fast path when it
// returns, so that its calls may take it.
func (e *upAuthEnv) client(t *testing.T, bearer string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.g.URL + "/mcp",
		HTTPClient: &http.Client{Transport: oauthtest.WithBearer(bearer, http.DefaultTransport)}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	e.g.WaitSession(t, cs.ID())
	return cs
}

// whoami calls secure's tool and returns its text, or the error's code
// and details.
func (e *upAuthEnv) whoami(t *testing.T, cs *mcp.ClientSession) (text, code string, details map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__secure__whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	if !res.IsError {
		return text, "", nil
	}
	sc, _ := res.StructuredContent.(map[string]any)
	details, _ = sc["error"].(map[string]any)
	if details == nil { // the tool declares an output schema: the error is in _meta
		details, _ = res.Meta[server.ErrorMetaKey].(map[string]any)
	}
	code, _ = details["code"].(string)
	return text, code, details
}

// userAsked is a client's user: what they were asked, and how they
// answer.
type userAsked struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
	errs  []error
}

func (u *userAsked) seen() ([]*mcp.ElicitParams, []error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.asked, u.errs
}

// urlElicitation is a client that supports URL-mode elicitation, whose
// user opens the URL (signed in to Legate with bearer, approving at the
// authorization server as account) and accepts, or answers action
// without opening it ("accept-only": accepts without opening it).
func urlElicitation(u *userAsked, bearer, account, action string) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			var err error
			if action == "accept" && req.Params.Mode == "url" {
				_, err = oauthtest.Connect(req.Params.URL, bearer, account)
			}
			u.mu.Lock()
			defer u.mu.Unlock()
			u.asked = append(u.asked, req.Params)
			if err != nil {
				u.errs = append(u.errs, err)
			}
			return &mcp.ElicitResult{Action: strings.TrimSuffix(action, "-only")}, nil
		},
	}
}

func TestUpstreamAutoAuth(t *testing.T) {
	e := newUpAuthEnv(t)
	connectURL := e.g.URL + "/connect/secure"

	// The upstream's tools are listed once someone connects it.
	first := e.principal(t, "alice", "")
	if _, err := oauthtest.Connect(connectURL, first, "alice-account"); err != nil {
		t.Fatal(err)
	}
	alice := e.client(t, first, nil, "2025-11-25")
	for i := 0; ; i++ {
		lt, err := alice.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(lt.Tools, func(tl *mcp.Tool) bool { return tl.Name == "mcp__secure__whoami" }) {
			break
		}
		if i == 500 {
			t.Fatal("secure's tools were never listed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if text, code, details := e.whoami(t, alice); code != "" || text != "alice-account" {
		t.Fatalf("alice's call: %q %q %v", text, code, details)
	}

	// Not connected: asked, the user connects, the call goes on with
	// their own token; the next call asks nothing.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("asks/"+version, func(t *testing.T) {
			who := "dana-" + version
			tok := e.principal(t, who, "")
			u := &userAsked{}
			cs := e.client(t, tok, urlElicitation(u, tok, who+"-account", "accept"), version)
			if stateless := cs.ID() == ""; stateless != (version == "2026-07-28") {
				t.Fatalf("session %q with protocol %s", cs.ID(), version)
			}
			text, code, details := e.whoami(t, cs)
			asked, errs := u.seen()
			if len(errs) > 0 {
				t.Fatalf("following the connect URL: %v", errs)
			}
			if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != connectURL || asked[0].ElicitationID == "" || !strings.Contains(asked[0].Message, "secure") {
				t.Fatalf("the client was asked %d times: %+v (the call: %q %q %v)", len(asked), asked, text, code, details)
			}
			if code != "" || text != who+"-account" {
				t.Fatalf("after connecting, the call: %q %q %v", text, code, details)
			}
			if text, code, _ := e.whoami(t, cs); code != "" || text != who+"-account" {
				t.Fatalf("the next call: %q %q", text, code)
			}
			if asked, _ := u.seen(); len(asked) != 1 {
				t.Fatalf("a connected caller was asked again: %d", len(asked))
			}
		})
	}

	// A connection that expired (the authorization server refuses its
	// refresh) asks again, and the call goes on with the new connection.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("expired/"+version, func(t *testing.T) {
			who := "kim-" + version
			tok := e.principal(t, who, "")
			if _, err := oauthtest.Connect(connectURL, tok, who+"-account"); err != nil {
				t.Fatal(err)
			}
			u := &userAsked{}
			cs := e.client(t, tok, urlElicitation(u, tok, who+"-account", "accept"), version)
			if text, code, _ := e.whoami(t, cs); code != "" || text != who+"-account" {
				t.Fatalf("connected, the call: %q %q", text, code)
			}
			e.p.FailRefresh(true)
			e.p.Expire(who + "-account")
			// The consent itself issues new tokens, no refresh.
			text, code, details := e.whoami(t, cs)
			e.p.FailRefresh(false)
			if asked, errs := u.seen(); len(asked) != 1 || len(errs) != 0 || code != "" || text != who+"-account" {
				t.Fatalf("expired: asked %d (%v), %q %q %v", len(asked), errs, text, code, details)
			}
		})
	}

	// Declined, the call fails saying so, with the URL.
	t.Run("declined", func(t *testing.T) {
		tok := e.principal(t, "erin", "")
		u := &userAsked{}
		cs := e.client(t, tok, urlElicitation(u, tok, "erin-account", "decline"), "2025-11-25")
		_, code, details := e.whoami(t, cs)
		msg, _ := details["message"].(string)
		if asked, _ := u.seen(); len(asked) != 1 || code != "NOT_CONNECTED" || !strings.Contains(msg, "did not connect") || !strings.Contains(msg, connectURL) {
			t.Fatalf("declined: asked %d, %q %v", len(asked), code, details)
		}
	})

	// Accepted but never connected, the call gives up when the upstream's
	// timeout ends.
	t.Run("never connected", func(t *testing.T) {
		tok := e.principal(t, "lea", "")
		u := &userAsked{}
		cs := e.client(t, tok, urlElicitation(u, tok, "lea-account", "accept-only"), "2025-11-25")
		start := time.Now()
		_, code, details := e.whoami(t, cs)
		msg, _ := details["message"].(string)
		if asked, _ := u.seen(); len(asked) != 1 || code != "NOT_CONNECTED" || !strings.Contains(msg, "was not connected within") || !strings.Contains(msg, connectURL) {
			t.Fatalf("never connected: asked %d, %q %v", len(asked), code, details)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("the call waited %v for the connection, past the upstream's timeout (2s)", took)
		}
	})

	// A client that cannot open a URL, and a profile with auto_auth:
	// false, are never asked: the error names the connect URL and what to
	// do.
	for name, c := range map[string]struct {
		principal, profile, version string
		opts                        func(u *userAsked, bearer string) *mcp.ClientOptions
	}{
		"no elicitation 2025-11-25": {"frank", "", "2025-11-25", func(*userAsked, string) *mcp.ClientOptions { return nil }},
		"no elicitation 2026-07-28": {"gina", "", "2026-07-28", func(*userAsked, string) *mcp.ClientOptions { return nil }},
		"auto_auth false 2025-11-25": {"ivy", "never-asked", "2025-11-25", func(u *userAsked, bearer string) *mcp.ClientOptions {
			return urlElicitation(u, bearer, "ivy-account", "accept")
		}},
		"auto_auth false 2026-07-28": {"jon", "never-asked", "2026-07-28", func(u *userAsked, bearer string) *mcp.ClientOptions {
			return urlElicitation(u, bearer, "jon-account", "accept")
		}},
	} {
		t.Run(name, func(t *testing.T) {
			tok := e.principal(t, c.principal, c.profile)
			u := &userAsked{}
			cs := e.client(t, tok, c.opts(u, tok), c.version)
			_, code, details := e.whoami(t, cs)
			msg, _ := details["message"].(string)
			if code != "NOT_CONNECTED" || details["connect_url"] != connectURL || !strings.Contains(msg, connectURL) || !strings.Contains(msg, "legate connect secure") || !strings.Contains(msg, "then call again") {
				t.Fatalf("%q %v", code, details)
			}
			if asked, _ := u.seen(); len(asked) != 0 {
				t.Fatalf("asked %d times", len(asked))
			}
		})
	}

	// No upstream token appears in Legate's log.
	for _, tok := range e.p.Issued() {
		if strings.Contains(e.g.Logs.String(), tok) {
			t.Errorf("an upstream token appears in the logs")
		}
	}
}
