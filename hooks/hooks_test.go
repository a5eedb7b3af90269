package hooks_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/slack-go/slack"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/hooks"
	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/sqlite"
)

// creds are an instance's credentials: a name set to "" is declared but
// cannot be read (an unset variable).
type creds map[string]string

func (c creds) Get(_ context.Context, name string) (string, error) {
	v, ok := c[name]
	switch {
	case !ok:
		return "", connectors.ErrNoCredential
	case v == "":
		return "", errors.New("env:UNSET is not set")
	}
	return v, nil
}

func (c creds) Has(name string) bool { _, ok := c[name]; return ok }

const (
	slackSecret  = "8f742231b10e8888abcd99yyyzzz85a5" // Slack's documentation's example
	githubSecret = "It's a Secret to Everybody"       // GitHub's documentation's example
	stripeSecret = "whsec_test_secret"
	notionToken  = "secret_notion_verification_token"
)

// instances are the receiving instances of the tests.
var instances = map[string]hooks.Instance{
	"slack":      {ID: "slack", Type: "slack", Tenant: "acme", Credentials: creds{"bot_token": "xoxb-1", "webhook_secret": slackSecret}},
	"github":     {ID: "github", Type: "github", Credentials: creds{"webhook_secret": githubSecret}},
	"stripe":     {ID: "stripe", Type: "stripe", Credentials: creds{"webhook_secret": stripeSecret}},
	"notion":     {ID: "notion", Type: "notion", Credentials: creds{"webhook_verification_token": notionToken}},
	"notion-new": {ID: "notion-new", Type: "notion", Credentials: creds{"webhook_verification_token": ""}},
	"quiet":      {ID: "quiet", Type: "slack", Credentials: creds{"bot_token": "xoxb-1"}},
	"pg":         {ID: "pg", Type: "postgres", Credentials: creds{"webhook_secret": "x"}},
}

type fixture struct {
	h      *hooks.Hooks
	events store.EventStore
	srv    *httptest.Server
	dir    string
	now    time.Time
}

func newFixture(t *testing.T, now time.Time) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite://:memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{events: st.Events(), dir: t.TempDir(), now: now}
	empty, _ := catalog.Build(catalog.Canonical, nil)
	f.h = hooks.New(hooks.Options{
		Events:   f.events,
		Instance: func(id string) (hooks.Instance, bool) { in, ok := instances[id]; return in, ok },
		View:     func(*auth.Principal) *catalog.Catalog { return empty },
		StateDir: f.dir,
		Now:      func() time.Time { return f.now },
	})
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/{instance}", f.h)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// post delivers body to instance with the headers, and returns the status
// and the answer's body.
func (f *fixture) post(t *testing.T, instance string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/hooks/"+instance, bytes.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *fixture) stored(t *testing.T, instance string) []store.Event {
	t.Helper()
	evs, err := f.events.List(context.Background(), store.EventQuery{Instance: instance})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func (f *fixture) refused(instance, reason string) float64 {
	var m dto.Metric
	if err := f.h.Refused().WithLabelValues(instance, reason).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func hexHMAC(key string, parts ...string) string {
	m := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// slackHeaders signs body as Slack does at ts.
func slackHeaders(secret string, ts int64, body string) map[string]string {
	s := strconv.FormatInt(ts, 10)
	return map[string]string{"X-Slack-Request-Timestamp": s, "X-Slack-Signature": "v0=" + hexHMAC(secret, "v0:"+s+":", body)}
}

// slackExample is the request of Slack's "Verifying requests from Slack"
// page, with its timestamp and signature.
const (
	slackExampleBody = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	slackExampleTS   = 1531420618
	slackExampleSig  = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

func TestSlack(t *testing.T) {
	t.Run("Slack's published example verifies, at its time, and is stored once", func(t *testing.T) {
		f := newFixture(t, time.Unix(slackExampleTS+30, 0))
		h := map[string]string{"X-Slack-Request-Timestamp": strconv.Itoa(slackExampleTS), "X-Slack-Signature": slackExampleSig,
			"Content-Type": "application/x-www-form-urlencoded"}
		for i := range 2 {
			if code, body := f.post(t, "slack", []byte(slackExampleBody), h); code != http.StatusOK {
				t.Fatalf("delivery %d: %d %s", i, code, body)
			}
		}
		evs := f.stored(t, "slack")
		if len(evs) != 1 {
			t.Fatalf("stored %d events, want 1", len(evs))
		}
		e := evs[0]
		if e.Kind != "command.invoked" || e.ProviderID != "398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c" ||
			e.Actor != "U2CERLKJA" || e.Object != "G8PSS9T3V" || e.Tenant != "acme" || e.Provider != "slack" {
			t.Fatalf("stored %+v", e)
		}
		if strings.Contains(string(e.Payload), "xyzz0WbapA4vBCDEFasx0q6G") || strings.Contains(string(e.Meta), "xyzz0") {
			t.Fatalf("the legacy verification token was kept: %s %s", e.Payload, e.Meta)
		}
		// The same request five minutes and more later is stale.
		f.now = time.Unix(slackExampleTS+6*60, 0)
		if code, _ := f.post(t, "slack", []byte(slackExampleBody), h); code != http.StatusUnauthorized || f.refused("slack", hooks.ReasonStale) != 1 {
			t.Fatalf("a stale delivery: %d, counted %v", code, f.refused("slack", hooks.ReasonStale))
		}
	})

	t.Run("events API callback, retried, bad signature", func(t *testing.T) {
		now := time.Now()
		f := newFixture(t, now)
		body := `{"token":"legacy","team_id":"T1","api_app_id":"A1","type":"event_callback","event_id":"Ev123","event_time":1700000000,
			"event":{"type":"message","user":"U1","channel":"C1","ts":"1700000000.000100","text":"hi","channel_type":"channel"}}`
		h := slackHeaders(slackSecret, now.Unix(), body)
		for range 2 {
			if code, b := f.post(t, "slack", []byte(body), h); code != http.StatusOK {
				t.Fatalf("%d %s", code, b)
			}
		}
		evs := f.stored(t, "slack")
		if len(evs) != 1 || evs[0].Kind != "message.posted" || evs[0].ProviderID != "Ev123" || evs[0].Actor != "U1" ||
			evs[0].Object != "C1/1700000000.000100" || !evs[0].Time.Equal(time.Unix(1700000000, 0)) || strings.Contains(string(evs[0].Payload), "legacy") {
			t.Fatalf("stored %+v", evs)
		}
		bad := slackHeaders("another secret", now.Unix(), body)
		if code, _ := f.post(t, "slack", []byte(body), bad); code != http.StatusUnauthorized || f.refused("slack", hooks.ReasonSignature) != 1 {
			t.Fatalf("a bad signature: %d, counted %v", code, f.refused("slack", hooks.ReasonSignature))
		}
		if code, _ := f.post(t, "slack", []byte(body), nil); code != http.StatusUnauthorized || f.refused("slack", hooks.ReasonSignature) != 2 {
			t.Fatalf("no signature: %d", code)
		}
		old := slackHeaders(slackSecret, now.Add(-10*time.Minute).Unix(), body)
		if code, _ := f.post(t, "slack", []byte(body), old); code != http.StatusUnauthorized || f.refused("slack", hooks.ReasonStale) != 1 {
			t.Fatalf("a stale timestamp: %d", code)
		}
		if n := len(f.stored(t, "slack")); n != 1 {
			t.Fatalf("%d events stored after refusals", n)
		}
	})

	t.Run("url_verification is answered", func(t *testing.T) {
		now := time.Now()
		f := newFixture(t, now)
		body := `{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`
		code, got := f.post(t, "slack", []byte(body), slackHeaders(slackSecret, now.Unix(), body))
		var ans struct{ Challenge string }
		_ = json.Unmarshal([]byte(got), &ans)
		if code != http.StatusOK || ans.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" || len(f.stored(t, "slack")) != 0 {
			t.Fatalf("%d %s", code, got)
		}
		if code, _ := f.post(t, "slack", []byte(body), slackHeaders("wrong", now.Unix(), body)); code != http.StatusUnauthorized {
			t.Fatalf("an unsigned challenge: %d", code)
		}
	})

	t.Run("agrees with slack-go's verifier", func(t *testing.T) {
		now := time.Now()
		f := newFixture(t, now)
		body := `{"type":"event_callback","event_id":"EvX","event":{"type":"reaction_added","user":"U2","item":{"channel":"C9","ts":"1.2"}}}`
		for name, secret := range map[string]string{"right": slackSecret, "wrong": "nope"} {
			h := slackHeaders(secret, now.Unix(), body)
			header := http.Header{}
			for k, v := range h {
				header.Set(k, v)
			}
			sv, err := slack.NewSecretsVerifier(header, slackSecret)
			if err != nil {
				t.Fatal(err)
			}
			sv.Write([]byte(body))
			libOK := sv.Ensure() == nil
			code, _ := f.post(t, "slack", []byte(body), h)
			if libOK != (code == http.StatusOK) {
				t.Fatalf("%s secret: slack-go says %v, the receiver %d", name, libOK, code)
			}
		}
		if evs := f.stored(t, "slack"); len(evs) != 1 || evs[0].Kind != "reaction.added" || evs[0].Object != "C9/1.2" {
			t.Fatalf("stored %+v", evs)
		}
	})
}

func TestGitHub(t *testing.T) {
	f := newFixture(t, time.Now())
	sign := func(secret, body string) string { return "sha256=" + hexHMAC(secret, body) }

	t.Run("GitHub's published example verifies", func(t *testing.T) {
		// Not an event (no JSON): verified, then refused as malformed, not
		// as a bad signature.
		const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
		h := map[string]string{"X-Hub-Signature-256": want, "X-GitHub-Event": "ping", "X-GitHub-Delivery": "d-example"}
		code, _ := f.post(t, "github", []byte("Hello, World!"), h)
		if code != http.StatusBadRequest || f.refused("github", hooks.ReasonMalformed) != 1 || f.refused("github", hooks.ReasonSignature) != 0 {
			t.Fatalf("the example: %d", code)
		}
		if sign(githubSecret, "Hello, World!") != want {
			t.Fatal("the test's signer disagrees with GitHub's example")
		}
	})

	t.Run("stored once per delivery, bad signature refused", func(t *testing.T) {
		body := `{"action":"opened","issue":{"html_url":"https://github.com/o/r/issues/7","number":7},"repository":{"full_name":"o/r","html_url":"https://github.com/o/r"},"sender":{"login":"octocat"}}`
		h := map[string]string{"X-Hub-Signature-256": sign(githubSecret, body), "X-GitHub-Event": "issues", "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958", "Content-Type": "application/json"}
		for range 2 {
			if code, b := f.post(t, "github", []byte(body), h); code != http.StatusOK {
				t.Fatalf("%d %s", code, b)
			}
		}
		evs := f.stored(t, "github")
		if len(evs) != 1 || evs[0].Kind != "issues.opened" || evs[0].Object != "https://github.com/o/r/issues/7" || evs[0].Actor != "octocat" ||
			evs[0].ProviderID != "72d3162e-cc78-11e3-81ab-4c9367dc0958" || !strings.Contains(string(evs[0].Meta), `"repository":"o/r"`) {
			t.Fatalf("stored %+v", evs)
		}
		h["X-Hub-Signature-256"] = sign("not the secret", body)
		h["X-GitHub-Delivery"] = "another"
		if code, _ := f.post(t, "github", []byte(body), h); code != http.StatusUnauthorized || f.refused("github", hooks.ReasonSignature) != 1 {
			t.Fatalf("a bad signature: %d", code)
		}
		delete(h, "X-Hub-Signature-256")
		if code, _ := f.post(t, "github", []byte(body), h); code != http.StatusUnauthorized || f.refused("github", hooks.ReasonSignature) != 2 {
			t.Fatalf("no signature: %d", code)
		}
		if n := len(f.stored(t, "github")); n != 1 {
			t.Fatalf("%d stored", n)
		}
	})
}

func TestStripe(t *testing.T) {
	f := newFixture(t, time.Now())
	body := []byte(`{"id":"evt_1NG8Du2eZvKYlo2CUI79vXWy","object":"event","api_version":"2019-02-19","created":1686089970,"livemode":false,"type":"charge.refunded",
		"data":{"object":{"id":"ch_3NG8Du2eZvKYlo2C0","object":"charge","customer":"cus_9s6XKzkNRiz8i3"}},"request":{"id":"req_1","idempotency_key":"k"}}`)
	signed := func(secret string, at time.Time) map[string]string {
		p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
		return map[string]string{"Stripe-Signature": p.Header}
	}
	for range 2 {
		if code, b := f.post(t, "stripe", body, signed(stripeSecret, time.Now())); code != http.StatusOK {
			t.Fatalf("%d %s", code, b)
		}
	}
	evs := f.stored(t, "stripe")
	if len(evs) != 1 || evs[0].Kind != "charge.refunded" || evs[0].ProviderID != "evt_1NG8Du2eZvKYlo2CUI79vXWy" || evs[0].Object != "ch_3NG8Du2eZvKYlo2C0" ||
		evs[0].Actor != "cus_9s6XKzkNRiz8i3" || !evs[0].Time.Equal(time.Unix(1686089970, 0)) {
		t.Fatalf("stored %+v", evs)
	}
	if code, _ := f.post(t, "stripe", body, signed("whsec_other", time.Now())); code != http.StatusUnauthorized || f.refused("stripe", hooks.ReasonSignature) != 1 {
		t.Fatalf("a bad signature: %d", code)
	}
	if code, _ := f.post(t, "stripe", body, signed(stripeSecret, time.Now().Add(-10*time.Minute))); code != http.StatusUnauthorized || f.refused("stripe", hooks.ReasonStale) != 1 {
		t.Fatalf("a stale timestamp: %d", code)
	}
	if code, _ := f.post(t, "stripe", body, nil); code != http.StatusUnauthorized || f.refused("stripe", hooks.ReasonSignature) != 2 {
		t.Fatalf("no signature: %d", code)
	}
}

func TestNotion(t *testing.T) {
	f := newFixture(t, time.Now())
	body := `{"id":"367cba44-b6f3-4c92-81e7-6a2e9659efd4","timestamp":"2024-12-05T23:57:05.379Z","workspace_id":"13950b26-c203-4f3b-b97d-93ec06319565",
		"subscription_id":"29d75c0d-5546-4414-8459-7b7a92f1fc4b","integration_id":"0ef104cd-477e-4f1b-9fa5-1d17f5da0bc2","type":"page.content_updated",
		"authors":[{"id":"c7c11cca-1d73-471d-9b6e-bdef51470190","type":"person"}],"entity":{"id":"153104cd-477e-809d-8dc4-ff2d96ae3090","type":"page"},"data":{}}`
	sig := func(token string) map[string]string {
		return map[string]string{"X-Notion-Signature": "sha256=" + hexHMAC(token, body)}
	}
	for range 2 {
		if code, b := f.post(t, "notion", []byte(body), sig(notionToken)); code != http.StatusOK {
			t.Fatalf("%d %s", code, b)
		}
	}
	evs := f.stored(t, "notion")
	if len(evs) != 1 || evs[0].Kind != "page.updated" || evs[0].Object != "153104cd-477e-809d-8dc4-ff2d96ae3090" ||
		evs[0].Actor != "c7c11cca-1d73-471d-9b6e-bdef51470190" || !evs[0].Time.Equal(time.Date(2024, 12, 5, 23, 57, 5, 379e6, time.UTC)) ||
		!strings.Contains(string(evs[0].Meta), `"type":"page.content_updated"`) {
		t.Fatalf("stored %+v", evs)
	}
	if code, _ := f.post(t, "notion", []byte(body), sig("secret_other")); code != http.StatusUnauthorized || f.refused("notion", hooks.ReasonSignature) != 1 {
		t.Fatalf("a bad signature: %d", code)
	}

	t.Run("verification request", func(t *testing.T) {
		verify := []byte(`{"verification_token":"` + notionToken + `"}`)
		if code, b := f.post(t, "notion", verify, nil); code != http.StatusOK || len(f.stored(t, "notion")) != 1 {
			t.Fatalf("the instance's own token: %d %s", code, b)
		}
		if code, _ := f.post(t, "notion", []byte(`{"verification_token":"secret_forged"}`), nil); code != http.StatusUnauthorized {
			t.Fatalf("another token: %d", code)
		}
		// Before its credential can be read, the token is kept for the
		// operator, readable by the process's user alone.
		fresh := []byte(`{"verification_token":"secret_first"}`)
		if code, b := f.post(t, "notion-new", fresh, nil); code != http.StatusOK {
			t.Fatalf("the first verification request: %d %s", code, b)
		}
		file := filepath.Join(f.dir, "hooks", "notion-new.verification_token")
		got, err := os.ReadFile(file)
		if err != nil || string(got) != "secret_first" {
			t.Fatalf("kept %q, %v", got, err)
		}
		if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
			t.Fatalf("the token's file is %v", fi.Mode())
		}
		// A second request does not replace the token kept.
		if code, _ := f.post(t, "notion-new", []byte(`{"verification_token":"secret_forged"}`), nil); code != http.StatusOK {
			t.Fatalf("a second verification request: %d", code)
		}
		if got, _ := os.ReadFile(file); string(got) != "secret_first" {
			t.Fatalf("the kept token became %q", got)
		}
		// Its events are refused until the credential is readable.
		if code, _ := f.post(t, "notion-new", []byte(body), sig("secret_first")); code != http.StatusServiceUnavailable {
			t.Fatalf("an event before the credential is set: %d", code)
		}
	})
}

// Unknown instances, instances of types without webhooks and instances
// without the credential are all the same 404.
func TestNotFound(t *testing.T) {
	f := newFixture(t, time.Now())
	var bodies []string
	for _, id := range []string{"nope", "quiet", "pg"} {
		code, b := f.post(t, id, []byte(`{}`), nil)
		if code != http.StatusNotFound {
			t.Fatalf("%s: %d", id, code)
		}
		bodies = append(bodies, b)
	}
	if bodies[0] != bodies[1] || bodies[1] != bodies[2] {
		t.Fatalf("the 404s differ: %q", bodies)
	}
}

func TestBodyBounded(t *testing.T) {
	f := newFixture(t, time.Now())
	big := bytes.Repeat([]byte("a"), hooks.MaxBody+1)
	if code, _ := f.post(t, "github", big, nil); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d", code)
	}
	// A large event is kept, its payload cut.
	pad := strings.Repeat("x", hooks.MaxPayload)
	body := fmt.Sprintf(`{"action":"created","pad":%q,"sender":{"login":"a"}}`, pad)
	h := map[string]string{"X-Hub-Signature-256": "sha256=" + hexHMAC(githubSecret, body), "X-GitHub-Event": "star", "X-GitHub-Delivery": "big"}
	if code, b := f.post(t, "github", []byte(body), h); code != http.StatusOK {
		t.Fatalf("%d %s", code, b)
	}
	evs := f.stored(t, "github")
	if len(evs) != 1 || !evs[0].Truncated || len(evs[0].Payload) != hooks.MaxPayload || evs[0].Kind != "star.created" {
		t.Fatalf("stored %d events, truncated %v", len(evs), len(evs) > 0 && evs[0].Truncated)
	}
}

// Only an instance receiving webhooks has the events tool, a read tool.
func TestToolsOfReceivingInstancesOnly(t *testing.T) {
	f := newFixture(t, time.Now())
	for id, want := range map[string]bool{"github": true, "notion-new": true, "quiet": false, "pg": false} {
		tools := f.h.Tools(instances[id])
		if got := len(tools) == 1 && tools[0].Name == hooks.ToolName && tools[0].Class == "read"; got != want || (!want && len(tools) != 0) {
			t.Errorf("%s: tools %+v, want the events tool: %v", id, tools, want)
		}
	}
}
