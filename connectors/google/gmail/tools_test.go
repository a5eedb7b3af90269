package gmail_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/google/gmail"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

// toolCase calls one tool against the stand-in and checks what it did.
type toolCase func(t *testing.T, s *standin, e *env)

// withFiles stores a message with an HTML body only and two attachments.
func (s *standin) withFiles() *smsg {
	return s.add(&smsg{labels: []string{"INBOX"}, headers: [][2]string{{"From", "Ana <ana@example.com>"}, {"To", account}, {"Cc", "bo@example.com"},
		{"Subject", "=?utf-8?q?Q3_r=C3=A9sum=C3=A9?="}, {"Date", "Mon, 30 Nov 2026 09:00:00 +0000"}},
		html:  "<html><head><style>p{}</style></head><body><p>Hello &amp; welcome</p><div>see the <b>files</b></div></body></html>",
		files: []sfile{{name: "notes.txt", mime: "text/plain", data: []byte("line one\nline two")}, {name: "chart.png", mime: "image/png", data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}}}})
}

// toolCases has a case for every tool (TestEveryToolHasACase).
var toolCases = map[string]toolCase{
	"gmail_search_messages": func(t *testing.T, s *standin, e *env) {
		s.seed(5)
		l := do[saas.List[model.Message]](t, e, "gmail_search_messages", `{"q":"is:unread report","limit":2}`, "")
		if len(l.Items) != 2 || l.NextCursor == "" || l.Items[0].Subject != "report 4" || l.Items[0].Sender == nil || l.Items[0].Sender.ID != "s1@example.com" ||
			l.Items[0].Snippet != "the text of report 4" || !slices.Contains(l.Items[0].Labels, "unread") || l.Items[0].ThreadRef == "" || l.Items[0].SentAt.IsZero() {
			t.Fatalf("search %+v", l)
		}
		wantAuthor(t, e, "gmail_search_messages", `{"q":"report"}`, "") // many senders: none named
	},
	"gmail_get_message": func(t *testing.T, s *standin, e *env) {
		m := s.withFiles()
		got := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, m.id), "")
		if got.Subject != "Q3 résumé" || got.Text != "Hello & welcome\n\nsee the files" || len(got.Attachments) != 2 || got.Attachments[0].Ref == "" ||
			got.Attachments[1].Name != "chart.png" || got.Attachments[1].Size != 7 || len(got.Recipients) != 2 || got.Recipients[1].Role != "cc" {
			t.Fatalf("message %+v", got)
		}
		if got.ProviderMetadata["text_source"] != "text/html converted to text" {
			t.Errorf("text source %v", got.ProviderMetadata["text_source"])
		}
		wantAuthor(t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, m.id), "ana@example.com")
	},
	"gmail_get_thread": func(t *testing.T, s *standin, e *env) {
		first := s.seed(1)[0]
		s.add(&smsg{thread: first.thread, labels: []string{"SENT"}, headers: [][2]string{{"From", account}, {"Subject", "Re: report 0"}}, text: "thanks"})
		s.seed(1)
		m := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, first.id), "")
		th := do[gmail.Thread](t, e, "gmail_get_thread", fmt.Sprintf(`{"thread":%q}`, m.ThreadRef), "")
		if len(th.Messages) != 2 || th.Subject != "report 0" || th.Messages[1].Text != "thanks" || th.Ref != m.ThreadRef {
			t.Fatalf("thread %+v", th)
		}
		wantAuthor(t, e, "gmail_get_thread", fmt.Sprintf(`{"thread":%q}`, m.ThreadRef), "")
	},
	"gmail_get_attachment": func(t *testing.T, s *standin, e *env) {
		m := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, s.withFiles().id), "")
		txt := do[gmail.AttachmentContent](t, e, "gmail_get_attachment", fmt.Sprintf(`{"attachment":%q}`, m.Attachments[0].Ref), "")
		png := do[gmail.AttachmentContent](t, e, "gmail_get_attachment", fmt.Sprintf(`{"attachment":%q}`, m.Attachments[1].Ref), "")
		raw, _ := base64.StdEncoding.DecodeString(png.Base64)
		if txt.Text != "line one\nline two" || txt.MimeType != "text/plain" || png.Text != "" || png.MimeType != "image/png" || string(raw) != "\x89PNG\x00\x01\x02" || png.MessageRef != m.Ref {
			t.Fatalf("attachments %+v %+v", txt, png)
		}
	},
	"gmail_list_labels": func(t *testing.T, s *standin, e *env) {
		l := do[saas.List[gmail.Label]](t, e, "gmail_list_labels", `{}`, "")
		if len(l.Items) != 10 || !slices.ContainsFunc(l.Items, func(x gmail.Label) bool { return x.ID == "Label_1" && x.Name == "Receipts" && x.Type == "user" }) {
			t.Fatalf("labels %+v", l)
		}
	},
	"gmail_create_draft": func(t *testing.T, s *standin, e *env) {
		orig := s.seed(1)[0]
		m := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, orig.id), "")
		d := do[model.Message](t, e, "gmail_create_draft", fmt.Sprintf(`{"reply_to":%q,"text":"draft answer"}`, m.Ref), "op-draft")
		s.mu.Lock()
		stored := s.messages[s.order[len(s.order)-1]]
		s.mu.Unlock()
		if d.Subject != "Re: report 0" || d.ThreadRef != m.ThreadRef || d.ProviderMetadata["draft_id"] == nil || !slices.Contains(d.Labels, "draft") ||
			stored.text != "draft answer" || stored.header("In-Reply-To") != orig.header("Message-ID") || stored.header("To") != "\"Sender 0\" <s0@example.com>" {
			t.Fatalf("draft %+v; stored %+v", d, stored)
		}
	},
	"gmail_send_message": func(t *testing.T, s *standin, e *env) {
		m := do[model.Message](t, e, "gmail_send_message", `{"to":["Ana <ana@example.com>"],"bcc":["audit@example.com"],"subject":"Plan","text":"Line 1\nLine 2 — é","html":"<p>Line 1</p><p>Line 2 — é</p>"}`, "op-send")
		s.mu.Lock()
		stored := s.messages[s.order[len(s.order)-1]]
		s.mu.Unlock()
		if m.Subject != "Plan" || m.Text != "Line 1\nLine 2 — é" || !slices.Contains(m.Labels, "sent") || len(m.Recipients) != 2 ||
			stored.text != "Line 1\r\nLine 2 — é" || stored.html != "<p>Line 1</p><p>Line 2 — é</p>" || stored.header("Bcc") != "<audit@example.com>" {
			t.Fatalf("sent %+v; stored %+v", m, stored)
		}
		read := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message":%q}`, m.Ref), "")
		if read.Text != "Line 1\nLine 2 — é" || read.Subject != "Plan" {
			t.Fatalf("read back %+v", read)
		}
	},
	"gmail_reply": func(t *testing.T, s *standin, e *env) {
		orig := s.add(&smsg{labels: []string{"INBOX"}, headers: [][2]string{{"From", "ana@example.com"}, {"Reply-To", "team@example.com"},
			{"To", account + ", bo@example.com"}, {"Cc", "cy@example.com"}, {"Subject", "Lunch"}, {"References", "<a@x>"}}, text: "Friday?"})
		r := do[model.Message](t, e, "gmail_reply", fmt.Sprintf(`{"message_id":%q,"text":"Yes","reply_all":true}`, orig.id), "op-reply")
		s.mu.Lock()
		stored := s.messages[s.order[len(s.order)-1]]
		s.mu.Unlock()
		if r.Subject != "Re: Lunch" || stored.thread != orig.thread || stored.header("In-Reply-To") != orig.header("Message-ID") ||
			stored.header("References") != "<a@x> "+orig.header("Message-ID") || stored.header("To") != "<team@example.com>" ||
			stored.header("Cc") != "<bo@example.com>, <cy@example.com>" {
			t.Fatalf("reply %+v; stored %+v", r, stored.headers)
		}
	},
	"gmail_modify_labels": func(t *testing.T, s *standin, e *env) {
		m := s.seed(1)[0]
		got := do[model.Message](t, e, "gmail_modify_labels", fmt.Sprintf(`{"message_id":%q,"add":["receipts","STARRED"],"remove":["INBOX","UNREAD"]}`, m.id), "op-labels")
		s.mu.Lock()
		labels := slices.Clone(m.labels)
		s.mu.Unlock()
		if !slices.Equal(labels, []string{"Label_1", "STARRED"}) || !slices.Equal(got.Labels, []string{"label_1", "starred"}) {
			t.Fatalf("labels %v; result %v", labels, got.Labels)
		}
		_, err := e.call(t, "gmail_modify_labels", fmt.Sprintf(`{"message_id":%q,"add":["Nope"]}`, m.id), "op-nope")
		wantCode(t, err, legate.CodeNotFound)
	},
}

func TestEveryTool(t *testing.T) {
	for name, run := range toolCases {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			run(t, s, newEnv(t, s, 3))
		})
	}
}

func TestEveryToolHasACase(t *testing.T) {
	e := newEnv(t, newStandin(t), 3)
	for _, tool := range e.tools {
		if toolCases[tool.Name] == nil {
			t.Errorf("tool %s has no case in toolCases", tool.Name)
		}
		if tool.Toolset != gmail.Toolset || tool.OutputSchema == nil {
			t.Errorf("tool %s: toolset %q, output schema %v", tool.Name, tool.Toolset, tool.OutputSchema != nil)
		}
		if tool.Class != legate.ClassRead && !strings.HasSuffix(tool.Description, saas.OnceNote) {
			t.Errorf("write %s: its description does not end with saas.OnceNote", tool.Name)
		}
	}
	if len(e.tools) != len(toolCases) {
		t.Errorf("%d tools, %d cases", len(e.tools), len(toolCases))
	}
}

// Search walks every page by cursor; a cursor is refused for another
// tenant or another query, without a request.
func TestSearchWalksPages(t *testing.T) {
	s := newStandin(t)
	s.seed(7)
	e := newEnv(t, s, 3)
	var subjects []string
	cursor, pages := "", 0
	for {
		l := do[saas.List[model.Message]](t, e, "gmail_search_messages", fmt.Sprintf(`{"q":"report","limit":3,"cursor":%q}`, cursor), "")
		pages++
		for _, m := range l.Items {
			subjects = append(subjects, m.Subject)
		}
		if l.NextCursor == "" {
			break
		}
		if pages == 1 {
			before := s.counts["messages"]
			_, err := e.callAs(t, "t2", "gmail_search_messages", fmt.Sprintf(`{"q":"report","cursor":%q}`, l.NextCursor), "")
			wantCode(t, err, legate.CodeInvalidArgument)
			_, err = e.call(t, "gmail_search_messages", fmt.Sprintf(`{"q":"other","cursor":%q}`, l.NextCursor), "")
			wantCode(t, err, legate.CodeInvalidArgument)
			if s.counts["messages"] != before {
				t.Fatal("a refused cursor reached Gmail")
			}
		}
		cursor = l.NextCursor
	}
	if pages != 3 || strings.Join(subjects, ",") != "report 6,report 5,report 4,report 3,report 2,report 1,report 0" {
		t.Fatalf("%d pages: %v", pages, subjects)
	}
}

// A message, thread or attachment Gmail does not have is NOT_FOUND, and
// the error names it; a ref of another tenant resolves to nothing.
func TestNotFoundNamesTheObject(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	for tool, args := range map[string]string{
		"gmail_get_message":   `{"message_id":"18cdeadbeef"}`,
		"gmail_get_thread":    `{"thread_id":"18cdeadbeef"}`,
		"gmail_reply":         `{"message_id":"18cdeadbeef","text":"hi"}`,
		"gmail_modify_labels": `{"message_id":"18cdeadbeef","add":["STARRED"]}`,
	} {
		_, err := e.call(t, tool, args, "op-"+tool)
		if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "18cdeadbeef") {
			t.Errorf("%s: %q does not name the object", tool, le.Message)
		}
	}
	m := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, s.withFiles().id), "")
	_, err := e.callAs(t, "t2", "gmail_get_message", fmt.Sprintf(`{"message":%q}`, m.Ref), "")
	wantCode(t, err, legate.CodeNotFound)
	s.mu.Lock()
	s.messages[s.order[0]].files = nil
	s.mu.Unlock()
	_, err = e.call(t, "gmail_get_attachment", fmt.Sprintf(`{"attachment":%q}`, m.Attachments[0].Ref), "")
	if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "notes.txt") {
		t.Errorf("%q does not name the attachment", le.Message)
	}
}

// An attachment over the bound is refused before it is fetched.
func TestLargeAttachmentIsRefused(t *testing.T) {
	s := newStandin(t)
	m := s.add(&smsg{headers: [][2]string{{"Subject", "big"}}, text: "see attached", files: []sfile{{name: "big.bin", mime: "application/octet-stream", data: make([]byte, gmail.MaxAttachmentBytes+1)}}})
	e := newEnv(t, s, 3)
	got := do[model.Message](t, e, "gmail_get_message", fmt.Sprintf(`{"message_id":%q}`, m.id), "")
	_, err := e.call(t, "gmail_get_attachment", fmt.Sprintf(`{"attachment":%q}`, got.Attachments[0].Ref), "")
	wantCode(t, err, legate.CodeInvalidArgument)
	if s.counts["messages/{id}/attachments/{aid}"] != 0 {
		t.Fatal("the attachment was fetched")
	}
}

// Bad arguments are refused before any request.
func TestArgumentsAreChecked(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	for tool, args := range map[string]string{
		"gmail_send_message": `{"subject":"x","text":"no recipient"}`,
		"gmail_create_draft": `{"to":["not an address"],"text":"x"}`,
		"gmail_reply":        `{"message_id":"a/b","text":"x"}`,
		"gmail_get_message":  `{}`,
	} {
		_, err := e.call(t, tool, args, "op")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	_, err := e.call(t, "gmail_send_message", `{"to":["a@example.com"],"text":"no key"}`, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.counts) != 0 {
		t.Fatalf("requests sent: %v", s.counts)
	}
}

// A message given as HTML alone is sent with its text as the plain
// alternative, and read back as that text.
func TestHTMLOnlyGetsATextAlternative(t *testing.T) {
	s := newStandin(t)
	e := newEnv(t, s, 3)
	m := do[model.Message](t, e, "gmail_send_message", `{"to":["ana@example.com"],"subject":"html","html":"<h1>Title</h1><p>Body &amp; more</p>"}`, "op-html")
	s.mu.Lock()
	stored := s.messages[s.order[len(s.order)-1]]
	s.mu.Unlock()
	if stored.text != "Title\r\n\r\nBody & more" || stored.html != "<h1>Title</h1><p>Body &amp; more</p>" || m.Text != "Title\n\nBody & more" {
		t.Fatalf("stored text %q html %q; result %q", stored.text, stored.html, m.Text)
	}
}

// A message deleted between the listing and the reading of its headers is
// left out of the page, not an error.
func TestSearchSkipsAMessageDeletedMeanwhile(t *testing.T) {
	s := newStandin(t)
	s.seed(3)
	s.fault = func(op string, n int, w http.ResponseWriter) bool {
		if op == "messages/{id}" && n == 1 {
			s.notFound(w)
			return true
		}
		return false
	}
	l := do[saas.List[model.Message]](t, newEnv(t, s, 3), "gmail_search_messages", `{}`, "")
	if len(l.Items) != 2 {
		t.Fatalf("%d messages", len(l.Items))
	}
}

// Every tool says which scopes let it work: the connector asks for them.
func TestEveryToolHasScopes(t *testing.T) {
	tools := gmail.Tools{}
	scopes := tools.Scopes()
	for _, tool := range tools.List() {
		if len(scopes[tool.Name]) == 0 {
			t.Errorf("%s has no scopes", tool.Name)
		}
		delete(scopes, tool.Name)
	}
	for name := range scopes {
		t.Errorf("scopes of %s, which is no tool", name)
	}
}

// wantAuthor calls tool and checks the author its result names in its
// _meta for the gateway's provenance mark (provenance.Author), "" for none.
func wantAuthor(t *testing.T, e *env, tool, args, want string) {
	t.Helper()
	res, err := e.call(t, tool, args, "")
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if a, ok := provenance.AuthorIn(res.Meta); a != want || ok != (want != "") || want == "" && res.Meta != nil {
		t.Fatalf("%s: author %q (%v, meta %v), want %q", tool, a, ok, res.Meta, want)
	}
}
