package webapi

import (
	"context"
	stdjson "encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	json "github.com/segmentio/encoding/json"
	"github.com/slack-go/slack"
)

// A page of channels and of messages as Slack answers them, with the
// fields slack-go decodes by hand (times, blocks, rich text) and those it
// nests (topic, files, reactions, attachments, edits, bot profiles).
const (
	channelsPage = `{"ok":true,"channels":[
{"id":"C01","name":"general","is_channel":true,"is_general":true,"is_member":true,"created":1700000000,"creator":"U01",
 "is_archived":false,"is_private":false,"is_shared":false,"is_ext_shared":false,"is_org_shared":false,"name_normalized":"general",
 "num_members":42,"topic":{"value":"All hands","creator":"U01","last_set":1700000100},"purpose":{"value":"Everyone","creator":"U01","last_set":0},
 "previous_names":["all"],"properties":{"canvas":{"file_id":"F01","is_empty":false}},"shared_team_ids":["T01"],"context_team_id":"T01",
 "locale":"en-US","priority":0.5,"unlinked":0},
{"id":"G02","name":"private-ops","is_channel":false,"is_group":true,"is_private":true,"is_member":true,"created":1700000200,
 "creator":"U02","is_archived":true,"topic":{"value":"","creator":"","last_set":0},"purpose":{"value":"ops","creator":"U02","last_set":1700000300},
 "num_members":3,"members":["U01","U02"]}],
"response_metadata":{"next_cursor":"dGVhbTpDMDI="}}`

	messagesPage = `{"ok":true,"has_more":true,"pin_count":1,"latest":"1700001000.000200","messages":[
{"type":"message","user":"U01","text":"Deploy done <@U02> :tada:","ts":"1700000900.000100","thread_ts":"1700000900.000100",
 "reply_count":2,"reply_users":["U02","U03"],"reply_users_count":2,"latest_reply":"1700000950.000300","client_msg_id":"6b1c0c1e-0000-4000-8000-000000000001",
 "team":"T01","edited":{"user":"U01","ts":"1700000910.000000"},
 "reactions":[{"name":"tada","users":["U02","U03"],"count":2}],
 "blocks":[{"type":"rich_text","block_id":"b1","elements":[{"type":"rich_text_section","elements":[
   {"type":"text","text":"Deploy done "},{"type":"user","user_id":"U02"},{"type":"emoji","name":"tada","unicode":"1f389"}]}]},
   {"type":"section","block_id":"b2","text":{"type":"mrkdwn","text":"*v1.2.3*"},"fields":[{"type":"plain_text","text":"prod","emoji":true}]},
   {"type":"context","elements":[{"type":"mrkdwn","text":"by the pipeline"}]},
   {"type":"divider","block_id":"b3"}]},
{"type":"message","subtype":"bot_message","bot_id":"B01","username":"ci","text":"build #812 failed","ts":"1700000800.000050",
 "bot_profile":{"id":"B01","name":"ci","app_id":"A01","deleted":false,"team_id":"T01","updated":1700000000,"icons":{"image_36":"https://example.com/36.png"}},
 "attachments":[{"id":1,"color":"ff0000","fallback":"failed","title":"Build 812","title_link":"https://ci.example.com/812","text":"step test failed",
   "fields":[{"title":"Branch","value":"main","short":true}],"footer":"ci","ts":1700000800}],
 "files":[{"id":"F02","name":"log.txt","title":"log.txt","mimetype":"text/plain","filetype":"text","size":2048,"user":"U01",
   "created":1700000800,"url_private":"https://files.slack.com/F02/log.txt","permalink":"https://acme.slack.com/files/U01/F02/log.txt","is_external":false}],
 "metadata":{"event_type":"build","event_payload":{"id":812,"ok":false}}}],
"response_metadata":{"next_cursor":"bmV4dA=="}}`
)

// TestReadsMatchSlackGo holds Reads to slack-go's methods of the same
// names: against one server, each sends the same request (path, headers
// the server reads, form) and gets the same result and the same error, for
// an answer, a refusal by rate, a failure of the server, an answer that is
// not ok (with the scopes Slack says are missing) and a Retry-After that
// is not a number.
func TestReadsMatchSlackGo(t *testing.T) {
	answers := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
	}{
		{name: "ok", status: 200},
		{name: "rate", status: 429, headers: map[string]string{"Retry-After": "7"}, body: `{"ok":false,"error":"ratelimited"}`},
		{name: "rate without a number", status: 429, headers: map[string]string{"Retry-After": "soon"}},
		{name: "rate without a wait", status: 429, body: `{"ok":false,"error":"ratelimited"}`},
		{name: "server", status: 503, headers: map[string]string{"Content-Type": "text/html"}, body: "<html>unavailable</html>"},
		{name: "not ok", status: 200, body: `{"ok":false,"error":"missing_scope","needed":"channels:history","provided":"chat:write",
			"response_metadata":{"messages":["[ERROR] missing scope"],"warnings":["superfluous_charset"]}}`},
		{name: "not json", status: 200, body: `{"ok":tru`},
	}
	var (
		mu   sync.Mutex
		seen []string // the requests of one call
	)
	answer := answers[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), body))
		mu.Unlock()
		for k, v := range answer.headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(answer.status)
		switch {
		case answer.body != "":
			io.WriteString(w, answer.body)
		case strings.HasSuffix(r.URL.Path, "conversations.list"):
			io.WriteString(w, channelsPage)
		default:
			io.WriteString(w, messagesPage)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	ours := New(&http.Client{}, srv.URL+"/api/", "xoxb-1")
	theirs := slack.New("xoxb-1", slack.OptionAPIURL(srv.URL+"/api/"), slack.OptionHTTPClient(&http.Client{}))

	type result struct {
		value any
		err   error
	}
	calls := []struct {
		name         string
		ours, theirs func() result
	}{
		{"conversations.list", func() result {
			chans, next, err := ours.GetConversationsContext(ctx, &slack.GetConversationsParameters{Cursor: "c1", Limit: 20, Types: []string{"public_channel", "private_channel"}, ExcludeArchived: true, TeamID: "T01"})
			return result{[]any{chans, next}, err}
		}, func() result {
			chans, next, err := theirs.GetConversationsContext(ctx, &slack.GetConversationsParameters{Cursor: "c1", Limit: 20, Types: []string{"public_channel", "private_channel"}, ExcludeArchived: true, TeamID: "T01"})
			return result{[]any{chans, next}, err}
		}},
		{"conversations.list, no options", func() result {
			chans, next, err := ours.GetConversationsContext(ctx, &slack.GetConversationsParameters{})
			return result{[]any{chans, next}, err}
		}, func() result {
			chans, next, err := theirs.GetConversationsContext(ctx, &slack.GetConversationsParameters{})
			return result{[]any{chans, next}, err}
		}},
		{"conversations.history", func() result {
			r, err := ours.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C01", Cursor: "c2", Inclusive: true, Latest: "1700001000.0", Limit: 50, Oldest: "1700000000.0", IncludeAllMetadata: true})
			return result{r, err}
		}, func() result {
			r, err := theirs.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C01", Cursor: "c2", Inclusive: true, Latest: "1700001000.0", Limit: 50, Oldest: "1700000000.0", IncludeAllMetadata: true})
			return result{r, err}
		}},
		{"conversations.history, no options", func() result {
			r, err := ours.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C01"})
			return result{r, err}
		}, func() result {
			r, err := theirs.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C01"})
			return result{r, err}
		}},
		{"conversations.replies", func() result {
			msgs, more, next, err := ours.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C01", Timestamp: "1700000900.000100", Cursor: "c3", Latest: "1700001000.0", Limit: 10, Oldest: "1700000000.0", Inclusive: true, IncludeAllMetadata: true})
			return result{[]any{msgs, more, next}, err}
		}, func() result {
			msgs, more, next, err := theirs.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C01", Timestamp: "1700000900.000100", Cursor: "c3", Latest: "1700001000.0", Limit: 10, Oldest: "1700000000.0", Inclusive: true, IncludeAllMetadata: true})
			return result{[]any{msgs, more, next}, err}
		}},
	}
	for _, a := range answers {
		answer = a
		for _, c := range calls {
			t.Run(a.name+"/"+c.name, func(t *testing.T) {
				run := func(f func() result) (result, []string) {
					mu.Lock()
					seen = nil
					mu.Unlock()
					r := f()
					mu.Lock()
					defer mu.Unlock()
					return r, seen
				}
				got, gotReqs := run(c.ours)
				want, wantReqs := run(c.theirs)
				if !reflect.DeepEqual(gotReqs, wantReqs) {
					t.Errorf("requests:\n ours   %q\n slack-go %q", gotReqs, wantReqs)
				}
				if fmt.Sprint(got.err) != fmt.Sprint(want.err) || reflect.TypeOf(got.err) != reflect.TypeOf(want.err) {
					t.Fatalf("error: ours %T %v, slack-go %T %v", got.err, got.err, want.err, want.err)
				}
				if want.err == nil && !reflect.DeepEqual(got.value, want.value) {
					t.Errorf("result:\n ours     %+v\n slack-go %+v", got.value, want.value)
				}
				if a.name == "ok" && want.err != nil {
					t.Fatalf("the answer did not decode: %v", want.err)
				}
			})
		}
	}
}

// BenchmarkDecodeChannels decodes a page of 20 channels, as
// conversations.list answers it, into slack-go's types: with
// encoding/json, as slack-go does, and as Reads does.
func BenchmarkDecodeChannels(b *testing.B) {
	var chans []string
	for i := range 20 {
		chans = append(chans, fmt.Sprintf(`{"id":"C%08d","name":"team-%02d","is_channel":true,"created":%d,"creator":"U000001","is_archived":false,"is_general":%t,"is_member":true,`+
			`"topic":{"value":"Work of team %d","creator":"U000001","last_set":1700000000},"purpose":{"value":"Coordination","creator":"U000001","last_set":1700000000},"num_members":%d}`,
			i, i, 1700000000+i, i == 0, i, 12+i))
	}
	page := []byte(`{"ok":true,"channels":[` + strings.Join(chans, ",") + `],"response_metadata":{"next_cursor":""}}`)
	type answer struct {
		slack.SlackResponse
		Channels []slack.Channel `json:"channels"`
	}
	for _, d := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"encoding-json", stdjson.Unmarshal}, {"reads", json.Unmarshal}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				var a answer
				if err := d.decode(page, &a); err != nil || len(a.Channels) != 20 {
					b.Fatal(err)
				}
			}
		})
	}
}
