package slack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"

	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

const botToken = "xoxb-canary-7f1c9a2b5e"

// userToken is a person's token the stand-in knows: ada's (U100).
const userToken = "xoxp-canary-ada-4e2f"

// standin is slacktest's server with the endpoints it lacks
// (conversations.list, history, replies) and a chat.postMessage that keeps
// what is posted, metadata included. fault, when set, may answer a request
// in its place, after or instead of doing its work.
//
// Its OAuth endpoints (oauth, under /oauth/: authorize, token, revoke)
// issue tokens per test user; an API call is answered with botToken or a
// valid token the OAuth endpoints issued, and bearers records the token
// each call came with, in order.
type standin struct {
	srv   *slacktest.Server
	oauth *oauthtest.Provider

	mu       sync.Mutex
	channels []slack.Channel
	messages map[string][]slack.Message // by channel, oldest first
	posts    int                        // chat.postMessage requests that posted
	calls    map[string]int             // requests by method
	bearers  []bearer                   // the token of each API call
	scopes   string
	nextTS   int
	more     // the endpoints of standin_more_test.go
	// fault is asked first, with the request's method and its count so
	// far (1 for the first); it returns true when it answered.
	fault func(method string, n int, w http.ResponseWriter, r *http.Request) (handled bool)
	// afterPost is asked after a post is kept, with the post's count; it
	// returns true when it answered in place of the success.
	afterPost func(n int, w http.ResponseWriter, r *http.Request) (handled bool)
}

func newStandin(t *testing.T, channels int) *standin {
	t.Helper()
	s := &standin{messages: map[string][]slack.Message{}, calls: map[string]int{}, more: newMore(),
		scopes: "chat:write,channels:read,channels:history,users:read,reactions:write", nextTS: 1, oauth: oauthtest.New(standinClientID, standinClientSecret, "xoxp-")}
	for i := range channels {
		ch := slack.Channel{}
		ch.ID = fmt.Sprintf("C%03d", i)
		ch.Name = fmt.Sprintf("chan-%d", i)
		ch.Topic.Value = "topic " + strconv.Itoa(i)
		ch.NumMembers = i
		s.channels = append(s.channels, ch)
	}
	bind := func(c slacktest.Customize) {
		c.Handle("/auth.test", s.wrap("auth.test", s.authTest))
		c.Handle("/conversations.list", s.wrap("conversations.list", s.list))
		c.Handle("/conversations.history", s.wrap("conversations.history", s.history))
		c.Handle("/conversations.replies", s.wrap("conversations.replies", s.replies))
		c.Handle("/chat.postMessage", s.wrap("chat.postMessage", s.post))
		s.bindMore(c.Handle)
		s.oauth.Mount(func(pattern string, h http.HandlerFunc) { c.Handle(pattern, s.slackShaped(pattern, h)) }, "/oauth")
	}
	s.srv = slacktest.NewTestServer(bind)
	s.srv.Start()
	t.Cleanup(s.srv.Stop)
	return s
}

func (s *standin) url() string { return s.srv.GetAPIURL() }

func (s *standin) wrap(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		s.calls[method]++
		n := s.calls[method]
		fault := s.fault
		s.mu.Unlock()
		if fault != nil && fault(method, n, w, r) {
			return
		}
		token := r.FormValue("token")
		if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			token = t
		}
		user, issued := s.oauth.User(token)
		s.mu.Lock()
		s.bearers = append(s.bearers, bearer{method: method, token: token, user: user})
		s.mu.Unlock()
		if token != botToken && token != userToken && !issued {
			answer(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		rec := &recorder{ResponseWriter: w}
		h(rec, r)
		s.record(method, rec.body.Bytes())
	}
}

// The OAuth app the stand-in knows.
const standinClientID, standinClientSecret = "1234.5678", "standin-client-secret-3b9e"

// bearer is the token an API call came with and the test user it was
// issued to ("" for botToken or a token the stand-in did not issue).
type bearer struct{ method, token, user string }

// oauthURL is the base of the stand-in's OAuth endpoints.
func (s *standin) oauthURL() string { return strings.TrimSuffix(s.url(), "/") + "/oauth" }

// calledWith returns the tokens the API calls came with.
func (s *standin) calledWith() []bearer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bearers)
}

func (s *standin) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (s *standin) authTest(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-OAuth-Scopes", s.scopes)
	id, name, bot := s.who(r)
	answer(w, map[string]any{"ok": true, "url": "https://acme.slack.com/", "team": "Acme", "team_id": "T1", "user": name, "user_id": id, "bot_id": bot})
}

// page cuts items at the cursor (an index) and limit.
func page[T any](items []T, r *http.Request) ([]T, string) {
	start, _ := strconv.Atoi(r.FormValue("cursor"))
	limit, _ := strconv.Atoi(r.FormValue("limit"))
	if limit <= 0 {
		limit = 100
	}
	start = min(start, len(items))
	end := min(start+limit, len(items))
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[start:end], next
}

func (s *standin) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	chans, next := page(slices.Clone(s.channels), r)
	s.mu.Unlock()
	answer(w, map[string]any{"ok": true, "channels": chans, "response_metadata": map[string]string{"next_cursor": next}})
}

func (s *standin) history(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var msgs []slack.Message
	oldest, _ := strconv.ParseFloat(r.FormValue("oldest"), 64)
	for _, m := range s.messages[r.FormValue("channel")] {
		if m.ThreadTimestamp != "" && m.ThreadTimestamp != m.Timestamp {
			continue // replies are in the thread, not the channel
		}
		if ts, _ := strconv.ParseFloat(m.Timestamp, 64); ts < oldest {
			continue
		}
		msgs = append(msgs, s.shown(m, r))
	}
	s.mu.Unlock()
	slices.Reverse(msgs) // newest first
	msgs = since(msgs, r.FormValue("oldest"))
	got, next := page(msgs, r)
	answer(w, map[string]any{"ok": true, "messages": wire(got), "has_more": next != "", "response_metadata": map[string]string{"next_cursor": next}})
}

func (s *standin) replies(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var msgs []slack.Message
	ts := r.FormValue("ts")
	for _, m := range s.messages[r.FormValue("channel")] {
		if m.Timestamp == ts || m.ThreadTimestamp == ts {
			msgs = append(msgs, s.shown(m, r))
		}
	}
	s.mu.Unlock()
	if len(msgs) == 0 {
		answer(w, map[string]any{"ok": false, "error": "thread_not_found"})
		return
	}
	msgs = since(msgs, r.FormValue("oldest"))
	got, next := page(msgs, r)
	answer(w, map[string]any{"ok": true, "messages": wire(got), "has_more": next != "", "response_metadata": map[string]string{"next_cursor": next}})
}

// shown is m as Slack shows it: metadata only when asked for.
func (s *standin) shown(m slack.Message, r *http.Request) slack.Message {
	if r.FormValue("include_all_metadata") != "1" {
		m.Metadata = slack.SlackMetadata{}
	}
	return m
}

// wire is m as the stand-in sends it: the fields it has set, as Slack
// leaves out those a message does not have (slack-go's Message would
// send them all, empty, and a thousand-call test would spend its time
// encoding them).
func wire(msgs []slack.Message) []map[string]any {
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		w := map[string]any{"type": "message", "ts": m.Timestamp, "text": m.Text}
		for k, v := range map[string]string{"user": m.User, "bot_id": m.BotID, "thread_ts": m.ThreadTimestamp, "subtype": m.SubType} {
			if v != "" {
				w[k] = v
			}
		}
		if m.ReplyCount > 0 {
			w["reply_count"] = m.ReplyCount
		}
		if m.Metadata.EventType != "" {
			w["metadata"] = m.Metadata
		}
		out[i] = w
	}
	return out
}

func since(msgs []slack.Message, oldest string) []slack.Message {
	o, err := strconv.ParseFloat(oldest, 64)
	if err != nil {
		return msgs
	}
	return slices.DeleteFunc(msgs, func(m slack.Message) bool {
		ts, _ := strconv.ParseFloat(m.Timestamp, 64)
		return ts < o
	})
}

func (s *standin) post(w http.ResponseWriter, r *http.Request) {
	channel := r.FormValue("channel")
	s.mu.Lock()
	if !s.known(channel) {
		s.mu.Unlock()
		answer(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	m := slack.Message{}
	m.Channel, m.Text = channel, r.FormValue("text")
	m.User, _, m.BotID = s.who(r)
	m.Timestamp = fmt.Sprintf("1800000000.%06d", s.nextTS)
	s.nextTS++
	m.ThreadTimestamp = r.FormValue("thread_ts")
	if meta := r.FormValue("metadata"); meta != "" {
		json.Unmarshal([]byte(meta), &m.Metadata)
	}
	s.messages[channel] = append(s.messages[channel], m)
	s.posts++
	s.wrote("chat.postMessage")
	n := s.posts
	after := s.afterPost
	s.mu.Unlock()
	if after != nil && after(n, w, r) || s.lost("chat.postMessage", w, r) {
		return
	}
	answer(w, map[string]any{"ok": true, "channel": channel, "ts": m.Timestamp, "message": m})
}

// seed adds n messages to channel, oldest first, and returns their ts.
func (s *standin) seed(channel string, n int, threadTS string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i := range n {
		m := slack.Message{}
		m.Channel, m.Text, m.User = channel, fmt.Sprintf("message %d", i), "U101"
		m.Timestamp = fmt.Sprintf("1700000000.%06d", s.nextTS)
		s.nextTS++
		m.ThreadTimestamp = threadTS
		s.messages[channel] = append(s.messages[channel], m)
		out = append(out, m.Timestamp)
	}
	return out
}

func (s *standin) postCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts
}

// markers counts the posts in channel by marker.
func (s *standin) markers(channel string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, m := range s.messages[channel] {
		if mk, ok := m.Metadata.EventPayload["operation"].(string); ok {
			out[mk]++
		}
	}
	return out
}

// hangUp answers nothing and closes the connection: the answer is lost.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}
