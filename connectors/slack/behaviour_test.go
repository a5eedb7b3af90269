package slack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas/model"
	slackcfg "github.com/legate-mcp/legate/connectors/slack"
)

func toolNames(c connectors.Connector) []string {
	var out []string
	for _, t := range c.Tools() {
		out = append(out, t.Name)
	}
	return out
}

// The defaults leave files and admin out; toolsets and read_only select;
// an unknown toolset is a config error naming the known ones.
func TestToolsetsSelect(t *testing.T) {
	s := newStandin(t, 1)
	def := toolNames(build(t, s, "slack", "").c)
	if slices.Contains(def, "upload_file") || slices.Contains(def, "set_topic") || !slices.Contains(def, "search_messages") || !slices.Contains(def, "post_message") {
		t.Fatalf("defaults: %v", def)
	}
	if got := toolNames(build(t, s, "slack", "toolsets: [files]").c); !slices.Equal(got, []string{"upload_file", "read_file"}) {
		t.Fatalf("files: %v", got)
	}
	ro := build(t, s, "slack", "toolsets: [all]\nread_only: true").c
	for _, tool := range ro.Tools() {
		if tool.Class != legate.ClassRead {
			t.Fatalf("read_only offers %s (%s)", tool.Name, tool.Class)
		}
	}
	if len(ro.(connectors.ToolCatalog).ToolCatalog()) != 18 {
		t.Fatalf("the catalog has %d tools", len(ro.(connectors.ToolCatalog).ToolCatalog()))
	}
	field, _ := reflect.TypeFor[slackcfg.Config]().FieldByName("Toolsets")
	ts := ro.(connectors.ToolCatalog).ToolCatalog()
	var sets []connectors.Toolset
	for _, tool := range ts {
		if !slices.ContainsFunc(sets, func(s connectors.Toolset) bool { return s.Name == tool.Toolset }) {
			sets = append(sets, connectors.Toolset{Name: tool.Toolset, Default: slices.Contains(def, tool.Name)})
		}
	}
	if want := connectors.ToolsetsDesc + ": " + connectors.ToolsetNames(sets); field.Tag.Get("desc") != want {
		t.Errorf("toolsets' desc %q; want %q", field.Tag.Get("desc"), want)
	}
	var node yaml.Node
	yaml.Unmarshal([]byte("api_url: https://slack.com/api/\ntoolsets: [chanels]"), &node)
	ct, _ := connectors.Lookup("slack")
	c, err := connectors.Build(ct, "slack", &node, "config")
	if err == nil {
		err = c.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), `no toolset "chanels"`) || !strings.Contains(err.Error(), "channels (default)") {
		t.Fatalf("an unknown toolset: %v", err)
	}
}

// search_messages needs a user token, and says how to give one.
func TestSearchNeedsAUserToken(t *testing.T) {
	f := newFixture(t, 2, "")
	_, err := f.in.call(t, "t1", "search_messages", `{"query":"message"}`, "")
	if le := wantCode(t, err, legate.CodeConfigError); !strings.Contains(le.Message, "user_token") || !strings.Contains(le.Message, "per_user") {
		t.Fatalf("message %q", le.Message)
	}
	if n := f.s.count("search.messages"); n != 0 {
		t.Fatalf("%d searches sent", n)
	}
}

// A person is named by @handle, e-mail or id for a DM; a channel by #name
// or id; a thread by a reply's permalink, whose reply goes in the thread.
func TestNativeIDs(t *testing.T) {
	f := newFixture(t, 3, "")
	for i, to := range []string{"@grace", "grace@example.com", "U101"} {
		res, err := f.in.call(t, "t1", "post_message", fmt.Sprintf(`{"channel":%q,"text":"dm %d"}`, to, i), fmt.Sprintf("op-dm-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if m := decode[model.Message](t, res); m.ProviderMetadata["channel_id"] != "D101" {
			t.Fatalf("%s: posted in %v", to, m.ProviderMetadata["channel_id"])
		}
	}
	res, err := f.in.call(t, "t1", "read_history", `{"channel":"@grace"}`, "")
	if l := mustList[model.Message](t, res, err); len(l.Items) != 3 || l.Items[0].Text != "dm 2" || l.Items[0].Sender.Name != "Legate" {
		t.Fatalf("the DM with grace holds %+v", l.Items)
	}
	for _, bad := range []string{"#nope", "@nobody", "nobody@example.com", "general"} {
		_, err := f.in.call(t, "t1", "read_history", fmt.Sprintf(`{"channel":%q}`, bad), "")
		if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, bad) {
			t.Errorf("%s: %q does not name it", bad, le.Message)
		}
	}
	f.s.mu.Lock()
	reply := f.s.messages["C000"][3] // the first reply to ts[0]
	f.s.mu.Unlock()
	link := permalinkOf("C000", reply.Timestamp) + "?thread_ts=" + f.ts[0]
	res, err = f.in.call(t, "t1", "reply_thread", fmt.Sprintf(`{"thread":%q,"text":"more"}`, link), "op-link")
	if err != nil {
		t.Fatal(err)
	}
	f.s.mu.Lock()
	got := f.s.messages["C000"][len(f.s.messages["C000"])-1]
	f.s.mu.Unlock()
	if got.ThreadTimestamp != f.ts[0] || decode[model.Message](t, res).Text != "more" {
		t.Fatalf("replied in %q; want the thread of %s", got.ThreadTimestamp, f.ts[0])
	}
}

// read_file returns text up to max_file_bytes and says it cut the rest;
// a file that is not text is described, not downloaded.
func TestReadFileIsBounded(t *testing.T) {
	f := newFixture(t, 1, "max_file_bytes: 1024")
	f.s.mu.Lock()
	big := seededFile(f.s.url())
	big.ID, big.Name, big.Size = "F9001", "big.log", 3000
	big.URLPrivateDownload = f.s.url() + "download/F9001"
	f.s.content["F9001"] = []byte("x" + strings.Repeat("é", 1500)) // the cap cuts an é in two
	img := seededFile(f.s.url())
	img.ID, img.Name, img.Mimetype, img.Filetype = "F9002", "cat.png", "image/png", "png"
	f.s.files = append(f.s.files, big, img)
	f.s.mu.Unlock()
	res, err := f.in.call(t, "t1", "read_file", `{"file":"F9001"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	out := decode[struct {
		Content   string `json:"content"`
		Truncated bool   `json:"truncated"`
	}](t, res)
	if !out.Truncated || len(out.Content) != 1023 || !utf8.ValidString(out.Content) || !strings.Contains(res.Text, "cut at 1023 bytes of 3000") {
		t.Fatalf("truncated %v, %d bytes, text %q", out.Truncated, len(out.Content), res.Text[len(res.Text)-60:])
	}
	res, err = f.in.call(t, "t1", "read_file", `{"file":"F9002"}`, "")
	if err != nil || !strings.Contains(res.Text, "not text") {
		t.Fatalf("an image: %v %v", err, res)
	}
}

// With a user_token, a call acts as the person: the post is theirs.
func TestUserTokenActsAsThePerson(t *testing.T) {
	f := newFixture(t, 1, "")
	creds := connectortest.Creds{"bot_token": botToken, "user_token": userToken}
	res, err := f.in.callWith(t, creds, "post_message", `{"channel":"#chan-0","text":"as ada"}`, "op-ada")
	if err != nil {
		t.Fatal(err)
	}
	m := decode[model.Message](t, res)
	if m.Sender == nil || m.Sender.ID != "U100" || m.Sender.Name != "ada" {
		t.Fatalf("sender %+v; want ada", m.Sender)
	}
	for _, b := range f.s.calledWith() {
		if b.method == "chat.postMessage" && b.token != userToken {
			t.Fatalf("posted with %q", b.token)
		}
	}
}

// A file whose download URL Slack names on another host is not fetched:
// the download carries the token.
func TestReadFileSendsTheTokenOnlyToSlack(t *testing.T) {
	var got atomic.Value
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		w.Write([]byte("secret-free"))
	}))
	defer elsewhere.Close()
	f := newFixture(t, 1, "")
	f.s.mu.Lock()
	odd := seededFile(f.s.url())
	odd.ID, odd.Name = "F9003", "odd.txt"
	odd.URLPrivate = elsewhere.URL + "/download/F9003" // another port: another host
	odd.URLPrivateDownload = odd.URLPrivate
	f.s.files = append(f.s.files, odd)
	f.s.mu.Unlock()
	_, err := f.in.call(t, "t1", "read_file", `{"file":"F9003"}`, "")
	if err == nil || !strings.Contains(err.Error(), "refusing to send the token") || got.Load() != nil {
		t.Fatalf("a download URL on another host: %v, and it was sent %v; want a refusal and nothing sent", err, got.Load())
	}
}
