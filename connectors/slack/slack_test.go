package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	_ "github.com/legate-mcp/legate/connectors/slack"
)

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{
		Type:        "slack",
		Config:      "api_url: http://127.0.0.1:9/api/\nallow_private_networks: true",
		Credentials: map[string]string{"bot_token": botToken},
	})
}

// instance is a built slack connector on a stand-in, and the key the
// gateway would give its calls.
type instance struct {
	c   connectors.Connector
	key []byte
	ops connectors.Operations
}

func build(t *testing.T, s *standin, id, extra string) *instance {
	t.Helper()
	cfg := fmt.Sprintf("api_url: %s\nallow_private_networks: true\nretry_backoff: 1ms\n%s", s.url(), extra)
	return &instance{c: connectortest.Build(t, "slack", id, cfg), key: []byte("key of " + id), ops: saas.NewMemoryOperations()}
}

func (in *instance) tool(t *testing.T, name string) connectors.Tool {
	t.Helper()
	for _, tool := range in.c.Tools() {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return connectors.Tool{}
}

// call runs tool with args for tenant, as operation op.
func (in *instance) call(t *testing.T, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return in.tool(t, tool).Run(context.Background(), &connectors.Call{
		Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
		Credentials: connectortest.Creds{"bot_token": botToken}, OperationID: op, Key: func() []byte { return in.key }, Operations: in.ops,
	})
}

func decode[T any](t *testing.T, res *legate.Result) T {
	t.Helper()
	b, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantCode(t *testing.T, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

func mustList[T any](t *testing.T, res *legate.Result, err error) saas.List[T] {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return decode[saas.List[T]](t, res)
}

// channelRef lists the channels and returns the ref of the one named.
func (in *instance) channelRef(t *testing.T, tenant, name string) string {
	t.Helper()
	res, err := in.call(t, tenant, "list_channels", `{"limit":1000}`, "")
	l := mustList[model.Channel](t, res, err)
	for _, ch := range l.Items {
		if ch.Name == name {
			return ch.Ref
		}
	}
	t.Fatalf("no channel %s", name)
	return ""
}

func TestListChannelsWalksPages(t *testing.T) {
	s := newStandin(t, 7)
	in := build(t, s, "slack", "")
	var names []string
	cursor := ""
	pages := 0
	for {
		args := `{"limit":2}`
		if cursor != "" {
			args = fmt.Sprintf(`{"limit":2,"cursor":%q}`, cursor)
		}
		res, err := in.call(t, "t1", "list_channels", args, "")
		l := mustList[model.Channel](t, res, err)
		pages++
		for _, ch := range l.Items {
			names = append(names, ch.Name)
			if ch.Contract != "channel.v1" || ch.Provider != "slack" || ch.Instance != "slack" || !strings.HasPrefix(ch.Ref, "channel://") || ch.ExternalID == "" {
				t.Errorf("channel %+v", ch)
			}
		}
		if !strings.Contains(res.Text, "channel(s)") {
			t.Errorf("text %q", res.Text)
		}
		if l.NextCursor == "" {
			break
		}
		if l.NextCursor == fmt.Sprint(len(names)) {
			t.Fatalf("next_cursor %q is Slack's own cursor", l.NextCursor)
		}
		cursor = l.NextCursor
	}
	if pages != 4 || strings.Join(names, ",") != "chan-0,chan-1,chan-2,chan-3,chan-4,chan-5,chan-6" {
		t.Fatalf("%d pages: %v", pages, names)
	}
}

func TestReadHistoryWalksPages(t *testing.T) {
	s := newStandin(t, 1)
	in := build(t, s, "slack", "")
	ts := s.seed("C000", 8, "")
	s.seed("C000", 7, ts[0]) // seven replies to the first message
	ref := in.channelRef(t, "t1", "chan-0")

	walk := func(args string) (texts []string, pages int, last saas.List[model.Message]) {
		cursor := ""
		for {
			a := strings.TrimSuffix(args, "}")
			if cursor != "" {
				a += fmt.Sprintf(`,"cursor":%q`, cursor)
			}
			res, err := in.call(t, "t1", "read_history", a+"}", "")
			l := mustList[model.Message](t, res, err)
			pages++
			for _, m := range l.Items {
				texts = append(texts, m.Text)
			}
			if l.NextCursor == "" {
				return texts, pages, l
			}
			last, cursor = l, l.NextCursor
		}
	}
	texts, pages, _ := walk(fmt.Sprintf(`{"channel":%q,"limit":3}`, ref))
	if pages != 3 || len(texts) != 8 || texts[0] != "message 7" || texts[7] != "message 0" {
		t.Fatalf("channel: %d pages, %v", pages, texts)
	}

	// The thread of the first message, by its ref.
	res, err := in.call(t, "t1", "read_history", fmt.Sprintf(`{"channel":%q,"limit":100}`, ref), "")
	l := mustList[model.Message](t, res, err)
	first := l.Items[len(l.Items)-1]
	if first.ChannelRef != ref || first.SentAt.IsZero() || first.Sender == nil {
		t.Errorf("message %+v", first)
	}
	texts, pages, _ = walk(fmt.Sprintf(`{"channel":%q,"thread":%q,"limit":3}`, ref, first.Ref))
	if pages != 3 || len(texts) != 8 || texts[0] != "message 0" {
		t.Fatalf("thread: %d pages, %v", pages, texts)
	}
}

func TestCursorsAndRefsStayWhereTheyWereMade(t *testing.T) {
	s := newStandin(t, 5)
	a, b := build(t, s, "slack", ""), build(t, s, "slack-2", "")
	res, err := a.call(t, "t1", "list_channels", `{"limit":2}`, "")
	l := mustList[model.Channel](t, res, err)
	cursor := fmt.Sprintf(`{"cursor":%q}`, l.NextCursor)
	ref := l.Items[0].Ref

	if _, err := a.call(t, "t1", "list_channels", cursor, ""); err != nil {
		t.Fatalf("the same tenant and instance: %v", err)
	}
	before := s.count("conversations.list")
	_, err = a.call(t, "t2", "list_channels", cursor, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = b.call(t, "t1", "list_channels", cursor, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = a.call(t, "t1", "read_history", fmt.Sprintf(`{"channel":%q,"cursor":%q}`, ref, l.NextCursor), "")
	wantCode(t, err, legate.CodeInvalidArgument) // another tool's cursor
	if n := s.count("conversations.list") - before; n != 0 {
		t.Errorf("%d requests sent for refused cursors", n)
	}

	// A channel ref of tenant t1 is nothing to tenant t2 or instance b.
	post := fmt.Sprintf(`{"channel":%q,"text":"hi"}`, ref)
	_, err = a.call(t, "t2", "post_message", post, "op-x")
	wantCode(t, err, legate.CodeNotFound)
	_, err = b.call(t, "t1", "post_message", post, "op-y")
	wantCode(t, err, legate.CodeNotFound)
	_, err = a.call(t, "t1", "post_message", `{"channel":"C999","text":"hi"}`, "op-z")
	wantCode(t, err, legate.CodeNotFound) // a Slack id the workspace does not have
	if s.postCount() != 0 {
		t.Fatalf("%d posts for refused refs", s.postCount())
	}
}

func TestPostAndReply(t *testing.T) {
	s := newStandin(t, 2)
	in := build(t, s, "slack", "")
	ref := in.channelRef(t, "t1", "chan-1")
	res, err := in.call(t, "t1", "post_message", fmt.Sprintf(`{"channel":%q,"text":"deploy done"}`, ref), "op-1")
	if err != nil {
		t.Fatal(err)
	}
	m := decode[model.Message](t, res)
	if m.Contract != "message.v1" || m.Text != "deploy done" || m.ChannelRef != ref || !strings.HasPrefix(m.Ref, "message://") {
		t.Fatalf("posted %+v", m)
	}
	res, err = in.call(t, "t1", "reply_thread", fmt.Sprintf(`{"thread":%q,"text":"details"}`, m.Ref), "op-2")
	if err != nil {
		t.Fatal(err)
	}
	r := decode[model.Message](t, res)
	if r.ThreadRef != m.Ref || r.Text != "details" {
		t.Fatalf("reply %+v; want in the thread of %s", r, m.Ref)
	}
	// A reply to the reply goes in the same thread: Slack is given the
	// first message's ts, never a reply's.
	res, err = in.call(t, "t1", "reply_thread", fmt.Sprintf(`{"thread":%q,"text":"more"}`, r.Ref), "op-3")
	if err != nil {
		t.Fatal(err)
	}
	if r2 := decode[model.Message](t, res); r2.ThreadRef != m.Ref {
		t.Fatalf("reply to a reply %+v; want in the thread of %s", r2, m.Ref)
	}
	s.mu.Lock()
	got := s.messages["C001"]
	s.mu.Unlock()
	if len(got) != 3 || got[1].ThreadTimestamp != got[0].Timestamp || got[2].ThreadTimestamp != got[0].Timestamp {
		t.Fatalf("Slack holds %+v", got)
	}
	// The same operation again returns the first outcome, posting nothing.
	res, err = in.call(t, "t1", "post_message", fmt.Sprintf(`{"channel":%q,"text":"deploy done"}`, ref), "op-1")
	if err != nil || decode[model.Message](t, res).Ref != m.Ref || s.postCount() != 3 {
		t.Fatalf("replay: %v, %d posts", err, s.postCount())
	}
	for _, args := range []string{fmt.Sprintf(`{"channel":%q,"text":"  "}`, ref), fmt.Sprintf(`{"channel":%q,"text":%q}`, ref, strings.Repeat("x", 40001))} {
		_, err := in.call(t, "t1", "post_message", args, "op-bad")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
}

func TestRateLimitIsWaitedThenSucceeds(t *testing.T) {
	s := newStandin(t, 3)
	in := build(t, s, "slack", "")
	s.fault = func(method string, n int, w http.ResponseWriter, r *http.Request) bool {
		if method == "conversations.list" && n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	start := time.Now()
	res, err := in.call(t, "t1", "list_channels", `{}`, "")
	if l := mustList[model.Channel](t, res, err); len(l.Items) != 3 {
		t.Fatalf("items %d", len(l.Items))
	}
	if s.count("conversations.list") != 2 {
		t.Fatalf("%d requests; want 2", s.count("conversations.list"))
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v; Retry-After asked 1s", d)
	}

	// A wait over max_retry_wait is not waited: RATE_LIMITED with the wait.
	s.fault = func(method string, n int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	before := s.count("conversations.list")
	_, err = in.call(t, "t1", "list_channels", `{}`, "")
	if le := wantCode(t, err, legate.CodeRateLimited); le.RetryAfter != time.Hour {
		t.Errorf("RetryAfter %v", le.RetryAfter)
	}
	if n := s.count("conversations.list") - before; n != 1 {
		t.Errorf("%d requests; want 1", n)
	}
}

func TestFailuresMapToTheirClass(t *testing.T) {
	status := func(code int) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { http.Error(w, "refused "+botToken, code) }
	}
	body := func(b string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/json"); w.Write([]byte(b)) }
	}
	tests := map[string]struct {
		answer   func(w http.ResponseWriter)
		code     legate.Code
		attempts int
	}{
		"401":               {status(401), legate.CodeAuthExpired, 1},
		"403":               {status(403), legate.CodePermissionDenied, 1},
		"404":               {status(404), legate.CodeNotFound, 1},
		"409":               {status(409), legate.CodeConflict, 1},
		"500":               {status(500), legate.CodeTransient, 3},
		"malformed body":    {body(`<html>upstream error</html>`), legate.CodeAdapterMapping, 1},
		"cut body":          {body(`{"ok":true,"channels":[{"id":`), legate.CodeTransient, 3}, // as a dropped connection
		"wrong shape":       {body(`{"ok":true,"channels":"none"}`), legate.CodeAdapterMapping, 1},
		"no channel id":     {body(`{"ok":true,"channels":[{"name":"x"}]}`), legate.CodeAdapterMapping, 1},
		"invalid_auth":      {body(`{"ok":false,"error":"invalid_auth"}`), legate.CodeAuthExpired, 1},
		"missing_scope":     {body(`{"ok":false,"error":"missing_scope","needed":"channels:read"}`), legate.CodePermissionDenied, 1},
		"channel_not_found": {body(`{"ok":false,"error":"channel_not_found"}`), legate.CodeNotFound, 1},
		"internal_error":    {body(`{"ok":false,"error":"internal_error"}`), legate.CodeTransient, 3},
		"unknown error":     {body(`{"ok":false,"error":"invalid_cursor"}`), legate.CodeInvalidArgument, 1},
		"echoed token":      {body(`{"ok":false,"error":"bad token ` + botToken + `"}`), legate.CodeInvalidArgument, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t, 1)
			in := build(t, s, "slack", "")
			s.fault = func(method string, n int, w http.ResponseWriter, r *http.Request) bool {
				tc.answer(w)
				return true
			}
			res, err := in.call(t, "t1", "list_channels", `{}`, "")
			le := wantCode(t, err, tc.code)
			if n := s.count("conversations.list"); n != tc.attempts {
				t.Errorf("%d requests; want %d", n, tc.attempts)
			}
			if !strings.HasPrefix(le.Message, "slack: ") {
				t.Errorf("message %q", le.Message)
			}
			noToken(t, res, err)
		})
	}
}

// noToken fails if the bot token shows in the result or the error, its
// message, its cause or its details.
func noToken(t *testing.T, res *legate.Result, err error) {
	t.Helper()
	var parts []string
	if res != nil {
		b, _ := json.Marshal(res.Structured)
		parts = append(parts, string(b), res.Text)
	}
	if err != nil {
		parts = append(parts, err.Error(), fmt.Sprintf("%+v", err))
		var le *legate.Error
		if errors.As(err, &le) {
			b, _ := json.Marshal(le.Details)
			parts = append(parts, string(b))
			if le.Err != nil {
				parts = append(parts, le.Err.Error())
			}
		}
	}
	for _, p := range parts {
		if strings.Contains(p, "7f1c9a2b5e") {
			t.Fatalf("the bot token shows in %q", p)
		}
	}
}

func TestTokenNeverShows(t *testing.T) {
	s := newStandin(t, 2)
	in := build(t, s, "slack", "")
	ref := in.channelRef(t, "t1", "chan-0")
	// A message whose text quotes the token is data, not a leak; but no
	// answer built by the connector may carry the token it used.
	for _, tc := range []struct{ tool, args string }{
		{"list_channels", `{}`},
		{"read_history", fmt.Sprintf(`{"channel":%q}`, ref)},
		{"post_message", fmt.Sprintf(`{"channel":%q,"text":"hello"}`, ref)},
	} {
		res, err := in.call(t, "t1", tc.tool, tc.args, "op-"+tc.tool)
		if err != nil {
			t.Fatal(err)
		}
		noToken(t, res, err)
	}
	var lines []string
	ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
	err := in.c.Test(ctx, connectortest.Creds{"bot_token": botToken})
	if err != nil {
		t.Fatal(err)
	}
	noToken(t, &legate.Result{Text: strings.Join(lines, "\n")}, err)
}

func TestConnectionTestReportsScopes(t *testing.T) {
	s := newStandin(t, 1)
	in := build(t, s, "slack", "")
	report := func() ([]string, error) {
		var lines []string
		ctx := connectors.WithReporter(context.Background(), func(l string) { lines = append(lines, l) })
		return lines, in.c.Test(ctx, connectortest.Creds{"bot_token": botToken})
	}
	lines, err := report()
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"auth.test: ok, user legate (U1) on team Acme (T1)", "scopes granted: channels:history, channels:read, chat:write, reactions:write, users:read", "scope chat:write", "post_message"} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q:\n%s", want, all)
		}
	}
	s.scopes = "chat:write,channels:read"
	lines, err = report()
	if le := wantCode(t, err, legate.CodePermissionDenied); !strings.Contains(le.Message, "channels:history") {
		t.Errorf("error %q does not name the missing scope", le.Message)
	}
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "channels:history MISSING") {
		t.Errorf("report does not flag the missing scope:\n%s", all)
	}
	err = in.c.Test(context.Background(), connectortest.Creds{"bot_token": "xoxb-wrong"})
	wantCode(t, err, legate.CodeAuthExpired)
}
