package slack_test

// auto_auth through the whole gateway (issue 21, done-when 4): a call to
// a per-user Slack instance its caller has not connected asks the user,
// through URL-mode elicitation, to open the connect URL; the user
// connects (here, the client's handler follows the URL as a browser
// would) and the call goes on with that user's token. A client that
// cannot be asked, or a profile with auto_auth: false, gets
// NOT_CONNECTED naming the URL.

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asking is a client's side of auto_auth: what it was asked, and how its
// user answers.
type asking struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
	errs  []error
}

func (a *asking) record(p *mcp.ElicitParams, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, p)
	if err != nil {
		a.errs = append(a.errs, err)
	}
}

func (a *asking) seen() ([]*mcp.ElicitParams, []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked, a.errs
}

// urlElicitation is a client that supports URL-mode elicitation, whose
// user opens the URL (as bearer's principal, approving at Slack as
// account) and accepts, or answers action without opening it.
func (e *perUserEnv) urlElicitation(a *asking, bearer, account, action string) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			var err error
			if action == "accept" && req.Params.Mode == "url" {
				err = e.open(req.Params.URL, bearer, account)
			}
			a.record(req.Params, err)
			return &mcp.ElicitResult{Action: action}, nil
		},
	}
}

func TestAutoAuth(t *testing.T) {
	e := newPerUserEnv(t)
	connectURL := e.g.URL + "/connect/slack"

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("asks/"+version, func(t *testing.T) {
			who := "dana-" + version
			tok := e.principal(who, "")
			a := &asking{}
			cs := e.client(tok, e.urlElicitation(a, tok, who+"-slack", "accept"), version)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			e.g.WaitSession(t, cs.ID())
			code, details := e.list(cs)
			asked, errs := a.seen()
			if len(errs) > 0 {
				t.Fatalf("following the connect URL: %v", errs)
			}
			if len(asked) != 1 || asked[0].Mode != "url" || asked[0].URL != connectURL || asked[0].ElicitationID == "" || !strings.Contains(asked[0].Message, "slack") {
				t.Fatalf("the client was asked %d times: %+v", len(asked), asked)
			}
			if code != "" || e.lastUser() != who+"-slack" {
				t.Fatalf("after connecting, the call: %q %v, reached Slack as %q", code, details, e.lastUser())
			}
			// Connected, the next call asks nothing.
			if code, _ := e.list(cs); code != "" || e.lastUser() != who+"-slack" {
				t.Fatalf("the next call: %q as %q", code, e.lastUser())
			}
			if asked, _ := a.seen(); len(asked) != 1 {
				t.Fatalf("a connected caller was asked again: %d", len(asked))
			}
		})
	}

	// A connection that expired (its refresh refused) asks again, and the
	// call goes on with the new connection.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("expired/"+version, func(t *testing.T) {
			who := "kim-" + version
			tok := e.principal(who, "")
			e.connect(tok, who+"-slack")
			e.slack.oauth.FailRefresh(true)
			defer e.slack.oauth.FailRefresh(false)
			e.slack.oauth.Expire(who + "-slack")
			a := &asking{}
			cs := e.client(tok, e.urlElicitation(a, tok, who+"-slack", "accept"), version)
			e.g.WaitSession(t, cs.ID())
			code, details := e.list(cs)
			if asked, errs := a.seen(); len(asked) != 1 || len(errs) != 0 || code != "" || e.lastUser() != who+"-slack" {
				t.Fatalf("expired: asked %d (%v), %q %v as %q", len(asked), errs, code, details, e.lastUser())
			}
		})
	}

	// Declined, the call fails saying so, with the URL.
	t.Run("declined", func(t *testing.T) {
		tok := e.principal("erin", "")
		a := &asking{}
		cs := e.client(tok, e.urlElicitation(a, tok, "erin-slack", "decline"), "2025-11-25")
		e.g.WaitSession(t, cs.ID())
		code, details := e.list(cs)
		msg, _ := details["message"].(string)
		if asked, _ := a.seen(); len(asked) != 1 || code != "NOT_CONNECTED" || !strings.Contains(msg, "did not connect") || !strings.Contains(msg, connectURL) {
			t.Fatalf("declined: asked %d, %q %v", len(asked), code, details)
		}
	})

	// A client that cannot open a URL (form elicitation only), and a
	// profile with auto_auth: false, are never asked: the error names the
	// connect URL and what to do.
	formOnly := func(a *asking) *mcp.ClientOptions {
		return &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				a.record(req.Params, nil)
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
		}
	}
	for name, c := range map[string]struct {
		principal, profile, version string
		opts                        func(*asking, string) *mcp.ClientOptions
	}{
		"form only 2025-11-25": {"frank", "", "2025-11-25", func(a *asking, _ string) *mcp.ClientOptions { return formOnly(a) }},
		"form only 2026-07-28": {"gina", "", "2026-07-28", func(a *asking, _ string) *mcp.ClientOptions { return formOnly(a) }},
		"no elicitation":       {"hugo", "", "2025-11-25", func(*asking, string) *mcp.ClientOptions { return nil }},
		"auto_auth false 2025": {"ivy", "never-asked", "2025-11-25", func(a *asking, tok string) *mcp.ClientOptions { return e.urlElicitation(a, tok, "ivy-slack", "accept") }},
		"auto_auth false 2026": {"jon", "never-asked", "2026-07-28", func(a *asking, tok string) *mcp.ClientOptions { return e.urlElicitation(a, tok, "jon-slack", "accept") }},
	} {
		t.Run(name, func(t *testing.T) {
			tok := e.principal(c.principal, c.profile)
			a := &asking{}
			cs := e.client(tok, c.opts(a, tok), c.version)
			e.g.WaitSession(t, cs.ID())
			calls := len(e.slack.calledWith())
			code, details := e.list(cs)
			msg, _ := details["message"].(string)
			if code != "NOT_CONNECTED" || details["connect_url"] != connectURL || !strings.Contains(msg, connectURL) || !strings.Contains(msg, "legate connect slack") || !strings.Contains(msg, "then call again") {
				t.Fatalf("%q %v", code, details)
			}
			if asked, _ := a.seen(); len(asked) != 0 || len(e.slack.calledWith()) != calls {
				t.Fatalf("asked %d times; Slack called %d times", len(asked), len(e.slack.calledWith())-calls)
			}
		})
	}

	// No per-user token appears in anything Legate said or logged.
	e.mu.Lock()
	said := strings.Join(e.said, "\n")
	e.mu.Unlock()
	for _, tok := range e.slack.oauth.Issued() {
		if strings.Contains(said, tok) || strings.Contains(e.g.Logs.String(), tok) {
			t.Errorf("a per-user token appears in an answer or the logs")
		}
	}
}
