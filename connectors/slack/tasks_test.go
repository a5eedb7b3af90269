package slack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// callWith runs tool as call does, with creds.
func (in *instance) callWith(t *testing.T, creds connectortest.Creds, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return in.tool(t, tool).Run(context.Background(), &connectors.Call{
		Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: "t1"},
		Credentials: creds, OperationID: op, Key: func() []byte { return in.key }, Operations: in.ops,
	})
}

// permalinkOf is the permalink of message ts of channel.
func permalinkOf(channel, ts string) string {
	return "https://acme.slack.com/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}

// toolCase is one call of a tool against the stand-in: args of the
// i-th call, and the check of its result.
type toolCase struct {
	args  func(i int) string
	check func(t *testing.T, i int, res *legate.Result)
	// user makes the call with userToken.
	user bool
	// method is the Slack method of a write, counted by the stand-in.
	method string
}

// fixture is a stand-in seeded for every tool's case, and the cases.
type fixture struct {
	s     *standin
	in    *instance
	ts    []string // the messages of C000, oldest first
	cases map[string]toolCase
}

// newFixture seeds n messages, n reactions of the bot and n scheduled
// messages, and builds an instance offering every tool.
func newFixture(t *testing.T, n int, extra string) *fixture {
	t.Helper()
	s := newStandin(t, 3)
	f := &fixture{s: s, in: build(t, s, "slack", "toolsets: [all]\n"+extra)}
	f.ts = s.seed("C000", n, "")
	s.seed("C000", 2, f.ts[0])
	s.mu.Lock()
	for i, ts := range f.ts {
		s.reactions["C000/"+ts+"/thumbsup"] = []string{"U1"}
		s.sched = append(s.sched, schedAt(i))
	}
	s.lastRead["C001"], s.lastRead["C002"] = "0", "9999999999"
	s.mu.Unlock()
	s.seed("C001", 3, "")
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	msg := func(tool string) func(i int) string {
		return func(i int) string {
			return fmt.Sprintf(`{"message":%q,"emoji":"thumbsup"}`, permalinkOf("C000", f.ts[i]))
		}
	}
	is := func(want string) func(t *testing.T, i int, res *legate.Result) {
		return func(t *testing.T, i int, res *legate.Result) {
			t.Helper()
			w := want
			if strings.Contains(w, "%d") {
				w = fmt.Sprintf(want, i)
			}
			if b, _ := json.Marshal(res.Structured); !strings.Contains(string(b), w) {
				t.Fatalf("call %d: %s lacks %q", i, b, w)
			}
		}
	}
	f.cases = map[string]toolCase{
		"list_channels": {args: func(int) string { return `{"limit":2}` }, check: is(`"name":"chan-0"`)},
		"read_history":  {args: func(int) string { return `{"channel":"#chan-0","limit":3}` }, check: is(`"user_name":"grace"`)},
		"read_thread":   {args: func(int) string { return fmt.Sprintf(`{"thread":%q}`, permalinkOf("C000", f.ts[0])) }, check: is(`"text":"message 0"`)},
		"list_unreads":  {args: func(int) string { return `{}` }, check: is(`"unread":3`)},
		"search_messages": {args: func(int) string { return `{"query":"message 1","limit":1}` }, user: true,
			check: is(`"url":"https://acme.slack.com/archives/C000/p`)},
		"list_users":     {args: func(int) string { return `{"limit":3}` }, check: is(`"handle":"ada"`)},
		"find_user":      {args: func(int) string { return `{"query":"grace@example.com"}` }, check: is(`"handle":"grace"`)},
		"open_dm":        {args: func(int) string { return `{"user":"@linus"}` }, check: is(`"external_id":"D102"`)},
		"list_scheduled": {args: func(int) string { return `{"channel":"C000","limit":2}` }, check: is(`"external_id":"Q9000"`)},
		"read_file":      {args: func(int) string { return `{"file":"F9000"}` }, check: is(`"content":"seeded text"`)},
		"post_message":   {args: func(i int) string { return fmt.Sprintf(`{"channel":"#chan-%d","text":"post %d"}`, i%3, i) }, check: is(`"text":"post %d"`), method: "chat.postMessage"},
		"reply_thread": {args: func(i int) string {
			return fmt.Sprintf(`{"thread":%q,"text":"reply %d"}`, permalinkOf("C000", f.ts[i]), i)
		}, check: is(`"text":"reply %d"`), method: "chat.postMessage"},
		"add_reaction":    {args: func(i int) string { return strings.Replace(msg("")(i), "thumbsup", "eyes", 1) }, check: is(`"reacted":true`), method: "reactions.add"},
		"remove_reaction": {args: msg("remove"), check: is(`"reacted":false`), method: "reactions.remove"},
		"schedule_message": {args: func(i int) string {
			return fmt.Sprintf(`{"channel":"C001","text":"later %d","post_at":%q}`, i, at.Add(time.Duration(i)*time.Second).Format(time.RFC3339))
		}, check: is(`"text":"later %d"`), method: "chat.scheduleMessage"},
		"delete_scheduled": {args: func(i int) string { return fmt.Sprintf(`{"scheduled":%q}`, f.scheduledRef(t, i)) }, check: is(`"deleted":true`), method: "chat.deleteScheduledMessage"},
		"set_topic":        {args: func(i int) string { return fmt.Sprintf(`{"channel":"#chan-1","topic":"new topic %d"}`, i) }, check: is(`"topic":"new topic %d"`), method: "conversations.setTopic"},
		"upload_file": {args: func(i int) string {
			return fmt.Sprintf(`{"channel":"#chan-%d","filename":"f%d.txt","content":"content %d"}`, i%3, i, i)
		}, check: is(`"name":"f%d.txt"`), method: "files.completeUploadExternal"},
	}
	s.mu.Lock()
	s.files = append(s.files, seededFile(s.url()))
	s.content["F9000"] = []byte("seeded text")
	s.mu.Unlock()
	return f
}

// scheduledRefs are the refs of the seeded scheduled messages, by index.
var scheduledRefs = map[*fixture][]string{}

// scheduledRef returns the ref of the i-th seeded scheduled message,
// walking list_scheduled's pages once.
func (f *fixture) scheduledRef(t *testing.T, i int) string {
	t.Helper()
	if refs := scheduledRefs[f]; refs != nil {
		return refs[i]
	}
	var refs []string
	cursor := ""
	for {
		res, err := f.in.call(t, "t1", "list_scheduled", fmt.Sprintf(`{"channel":"C000","limit":200,"cursor":%q}`, cursor), "")
		l := mustList[struct {
			Ref string `json:"ref"`
		}](t, res, err)
		for _, s := range l.Items {
			refs = append(refs, s.Ref)
		}
		if l.NextCursor == "" {
			break
		}
		cursor = l.NextCursor
	}
	scheduledRefs[f] = refs
	return refs[i]
}

// run calls tool's case i.
func (f *fixture) run(t *testing.T, in *instance, tool string, i int, op string) (*legate.Result, error) {
	t.Helper()
	c := f.cases[tool]
	creds := connectortest.Creds{"bot_token": botToken}
	if c.user {
		creds["user_token"] = userToken
	}
	return in.callWith(t, creds, tool, c.args(i), op)
}

// Every tool of the catalog has a case, and each case runs against the
// stand-in and returns what it should.
func TestEveryToolDoesItsTask(t *testing.T) {
	f := newFixture(t, 3, "")
	cat := f.in.c.(connectors.ToolCatalog).ToolCatalog()
	for _, tool := range cat {
		t.Run(tool.Name, func(t *testing.T) {
			c, ok := f.cases[tool.Name]
			if !ok {
				t.Fatalf("no case for %s", tool.Name)
			}
			res, err := f.run(t, f.in, tool.Name, 1, "op-task-"+tool.Name)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, 1, res)
		})
	}
	if len(f.cases) != len(cat) {
		t.Errorf("%d cases for %d tools", len(f.cases), len(cat))
	}
}

func schedAt(i int) slackScheduled {
	return slackScheduled{ID: fmt.Sprintf("Q%04d", 9000+i), Channel: "C000", PostAt: 1900000000 + i, DateCreated: 1800000000, Text: fmt.Sprintf("seeded %d", i)}
}

var _ = saas.OnceNote
var _ = model.MessageV1
