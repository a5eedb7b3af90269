package email_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/mail"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	email "github.com/legate-mcp/legate/connectors/email"
	"github.com/legate-mcp/legate/connectors/email/mailbox"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// refOf is the ref of the one message of folder whose subject holds
// subject.
func refOf(t testing.TB, in *instance, folder, subject string) string {
	t.Helper()
	res, err := in.call(t, "t1", "search", fmt.Sprintf(`{"folder":%q,"subject":%q,"limit":2}`, folder, subject), "")
	l := must[saas.List[model.Message]](t, res, err)
	if len(l.Items) != 1 {
		t.Fatalf("%d messages with subject %q in %s", len(l.Items), subject, folder)
	}
	return l.Items[0].Ref
}

// flags are the flags of the message of folder with subject, from the
// server's own store.
func (s *standin) flags(t testing.TB, folder, subject string) []imap.Flag {
	t.Helper()
	sess := s.mem.NewSession()
	defer sess.Close()
	if err := sess.Login(user, imapPassword); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Select(folder, nil); err != nil {
		t.Fatal(err)
	}
	data, err := sess.Search(imapserver.NumKindUID, &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Subject", Value: subject}}}, &imap.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(data.AllUIDs()) != 1 {
		t.Fatalf("%d messages with subject %q in %s", len(data.AllUIDs()), subject, folder)
	}
	var out []imap.Flag
	for _, r := range []struct {
		f imap.Flag
	}{{imap.FlagSeen}, {imap.FlagFlagged}, {imap.FlagDeleted}} {
		got, err := sess.Search(imapserver.NumKindUID, &imap.SearchCriteria{UID: []imap.UIDSet{imap.UIDSetNum(data.AllUIDs()...)}, Flag: []imap.Flag{r.f}}, &imap.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.AllUIDs()) == 1 {
			out = append(out, r.f)
		}
	}
	return out
}

// withAttachment is a multipart message with an HTML body only and a
// PDF attached.
func withAttachment(subject string, pdf []byte) string {
	return "From: Bob <bob@example.com>\nTo: ann@example.com\nSubject: " + subject + "\nMessage-ID: <att@example.com>\nDate: Mon, 02 Mar 2026 10:00:00 +0000\n" +
		"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b1\n\n--b1\nContent-Type: text/html; charset=utf-8\n\n<p>See the <b>invoice</b>.</p>\n" +
		"--b1\nContent-Type: application/pdf; name=\"invoice.pdf\"\nContent-Disposition: attachment; filename=\"invoice.pdf\"\nContent-Transfer-Encoding: base64\n\n" +
		base64.StdEncoding.EncodeToString(pdf) + "\n--b1--\n"
}

type toolCase func(t *testing.T, s *standin, in *instance)

// toolCases run each tool of the type against the stand-in.
var toolCases = map[string]toolCase{
	"search": func(t *testing.T, s *standin, in *instance) {
		seedInbox(t, s, 9)
		subjects, pages := walk(t, in, "t1", `{"limit":3}`)
		if len(subjects) != 9 || len(pages) != 3 {
			t.Fatalf("%d pages: %v", len(pages), subjects)
		}
	},
	"read": func(t *testing.T, s *standin, in *instance) {
		s.seed(t, "INBOX", withAttachment("invoice", []byte("%PDF-1.4 x")), day)
		res, err := in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, refOf(t, in, "INBOX", "invoice")), "")
		m := must[model.Message](t, res, err)
		if m.Text != "See the invoice." || m.ProviderMetadata["text_source"] != "text/html converted to text" || len(m.Attachments) != 1 || m.Attachments[0].Name != "invoice.pdf" {
			t.Fatalf("%+v", m)
		}
		if !strings.Contains(res.Text, "[attachment part 2] invoice.pdf (application/pdf") {
			t.Fatalf("text %q", res.Text)
		}
	},
	"folders": func(t *testing.T, s *standin, in *instance) {
		seedInbox(t, s, 4)
		res, err := in.call(t, "t1", "folders", `{}`, "")
		out := must[mailbox.Folders](t, res, err)
		got := map[string]mailbox.Folder{}
		for _, f := range out.Folders {
			got[f.Name] = f
		}
		if got["Trash"].SpecialUse != "trash" || got["Archive"].SpecialUse != "archive" || got["Drafts"].SpecialUse != "drafts" || got["INBOX"].SpecialUse != "" {
			t.Fatalf("%+v", out)
		}
		if in := got["INBOX"]; in.Messages == nil || *in.Messages != 4 || in.Unread == nil || *in.Unread != 2 || !in.Selectable {
			t.Fatalf("INBOX %+v", in)
		}
		if !strings.Contains(res.Text, "Trash [trash] 0 message(s)") {
			t.Fatalf("text %q", res.Text)
		}
	},
	"attachment": func(t *testing.T, s *standin, in *instance) {
		pdf := []byte("%PDF-1.4\n\x00\x01binary\xff")
		s.seed(t, "INBOX", withAttachment("invoice", pdf), day)
		ref := refOf(t, in, "INBOX", "invoice")
		res, err := in.call(t, "t1", "attachment", fmt.Sprintf(`{"message":%q,"part":"2"}`, ref), "")
		a := must[mailbox.Attachment](t, res, err)
		b, _ := base64.StdEncoding.DecodeString(a.Resource.Blob)
		if a.Name != "invoice.pdf" || a.MimeType != "application/pdf" || a.Resource.MimeType != "application/pdf" || string(b) != string(pdf) || a.Size != int64(len(pdf)) {
			t.Fatalf("%+v", a)
		}
		for args, code := range map[string]legate.Code{
			`"part":"9"`: legate.CodeNotFound, `"part":"x"`: legate.CodeInvalidArgument,
		} {
			_, err := in.call(t, "t1", "attachment", fmt.Sprintf(`{"message":%q,%s}`, ref, args), "")
			wantCode(t, err, code)
		}
	},
	"draft": func(t *testing.T, s *standin, in *instance) {
		res, err := in.call(t, "t1", "draft", `{"to":["bob@example.com"],"subject":"Plan","text":"Draft."}`, "op-d")
		if m := must[model.Message](t, res, err); m.Subject != "Plan" || s.count(t, "Drafts") != 1 {
			t.Fatalf("%+v", m)
		}
	},
	"send": func(t *testing.T, s *standin, in *instance) {
		res, err := in.call(t, "t1", "send", sendArgs, "op-s")
		if m := must[email.Sent](t, res, err); m.Delivery != "accepted" || len(s.delivered()) != 1 {
			t.Fatalf("%+v", m)
		}
	},
	"reply": func(t *testing.T, s *standin, in *instance) {
		s.seed(t, "INBOX", "From: Bob <bob@example.com>\nReply-To: Desk <desk@example.com>\nTo: ann@example.com, Carol <carol@example.com>\nCc: ops@example.com\n"+
			"Subject: Invoice\nMessage-ID: <orig@example.com>\nReferences: <root@example.com>\n\nPay?\n", day)
		ref := refOf(t, in, "INBOX", "Invoice")
		res, err := in.call(t, "t1", "reply", fmt.Sprintf(`{"message":%q,"html":"<p>Paid, <b>see</b> receipt.</p>","reply_all":true,"attachments":[{"name":"receipt.txt","mime_type":"text/plain","content_base64":"UkVDRUlQVA=="}]}`, ref), "op-r")
		out := must[email.Sent](t, res, err)
		got := s.delivered()
		if len(got) != 1 || out.Subject != "Re: Invoice" || out.Text != "Paid, see receipt." || len(out.Attachments) != 1 {
			t.Fatalf("%+v; %d delivered", out, len(got))
		}
		if strings.Join(got[0].To, ",") != "desk@example.com,carol@example.com,ops@example.com" {
			t.Errorf("to %v", got[0].To)
		}
		m := parse(t, got[0].Data)
		if m.Header.Get("In-Reply-To") != "<orig@example.com>" || m.Header.Get("References") != "<root@example.com> <orig@example.com>" || m.Header.Get("Subject") != "Re: Invoice" {
			t.Errorf("headers %v", m.Header)
		}
		body := string(got[0].Data)
		if !strings.Contains(body, "multipart/alternative") || !strings.Contains(body, "text/html") || !strings.Contains(body, `filename="receipt.txt"`) || !strings.Contains(body, "UkVDRUlQVA==") {
			t.Errorf("message:\n%s", body)
		}
		// A reply saved as a draft is not sent.
		res, err = in.call(t, "t1", "reply", fmt.Sprintf(`{"message":%q,"text":"Later.","draft":true}`, ref), "op-d")
		if d := must[model.Message](t, res, err); d.Subject != "Re: Invoice" || s.count(t, "Drafts") != 1 || len(s.delivered()) != 1 {
			t.Fatalf("%+v", d)
		}
	},
	"mark": func(t *testing.T, s *standin, in *instance) {
		seedInbox(t, s, 2) // report 0 is seen, report 1 not
		ref := refOf(t, in, "INBOX", "report 1")
		res, err := in.call(t, "t1", "mark", fmt.Sprintf(`{"message":%q,"read":true,"flagged":true}`, ref), "op-1")
		c := must[mailbox.Change](t, res, err)
		if strings.Join(c.Labels, ",") != "flagged,seen" || fmt.Sprint(s.flags(t, "INBOX", "report 1")) != `[\Seen \Flagged]` {
			t.Fatalf("%+v", c)
		}
		res, err = in.call(t, "t1", "mark", fmt.Sprintf(`{"message":%q,"read":false}`, refOf(t, in, "INBOX", "report 0")), "op-2")
		if c := must[mailbox.Change](t, res, err); len(c.Labels) != 0 || len(s.flags(t, "INBOX", "report 0")) != 0 {
			t.Fatalf("%+v", c)
		}
		_, err = in.call(t, "t1", "mark", fmt.Sprintf(`{"message":%q}`, ref), "op-3")
		wantCode(t, err, legate.CodeInvalidArgument)
	},
	"move": func(t *testing.T, s *standin, in *instance) {
		seedInbox(t, s, 2)
		res, err := in.call(t, "t1", "move", fmt.Sprintf(`{"message":%q,"folder":"Archive"}`, refOf(t, in, "INBOX", "report 1")), "op-1")
		c := must[mailbox.Change](t, res, err)
		if c.Folder != "Archive" || s.count(t, "INBOX") != 1 || s.count(t, "Archive") != 1 {
			t.Fatalf("%+v", c)
		}
		// The ref it returns names it in its new folder.
		res, err = in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, c.Message), "")
		if m := must[model.Message](t, res, err); m.Subject != "report 1" || m.ProviderMetadata["folder"] != "Archive" {
			t.Fatalf("%+v", m)
		}
		_, err = in.call(t, "t1", "move", fmt.Sprintf(`{"message":%q,"folder":"Nowhere"}`, refOf(t, in, "INBOX", "report 0")), "op-2")
		wantCode(t, err, legate.CodeNotFound)
	},
	"archive": func(t *testing.T, s *standin, in *instance) {
		seedInbox(t, s, 1)
		res, err := in.call(t, "t1", "archive", fmt.Sprintf(`{"message":%q}`, refOf(t, in, "INBOX", "report 0")), "op-1")
		if c := must[mailbox.Change](t, res, err); c.Folder != "Archive" || c.Message == "" || s.count(t, "Archive") != 1 || s.count(t, "INBOX") != 0 {
			t.Fatalf("%+v", c)
		}
	},
	"delete": func(t *testing.T, s *standin, in *instance) {
		seedInbox(t, s, 1)
		res, err := in.call(t, "t1", "delete", fmt.Sprintf(`{"message":%q}`, refOf(t, in, "INBOX", "report 0")), "op-1")
		c := must[mailbox.Change](t, res, err)
		if c.Action != "moved to trash" || c.Folder != "Trash" || s.count(t, "Trash") != 1 || s.count(t, "INBOX") != 0 {
			t.Fatalf("%+v", c)
		}
		// Deleting from the trash expunges for good.
		res, err = in.call(t, "t1", "delete", fmt.Sprintf(`{"message":%q}`, c.Message), "op-2")
		if c := must[mailbox.Change](t, res, err); c.Action != "expunged" || s.count(t, "Trash") != 0 || s.writeCount("expunge") != 1 {
			t.Fatalf("%+v", c)
		}
	},
}

// Every tool of the catalog has a case, and every case passes against the
// stand-in, each on an instance offering every toolset.
func TestToolCases(t *testing.T) {
	probe := build(t, newStandin(t), "probe", "toolsets: [all]")
	tools := probe.c.(connectors.ToolCatalog).ToolCatalog()
	for _, tool := range tools {
		if toolCases[tool.Name] == nil {
			t.Errorf("tool %s has no case in toolCases", tool.Name)
		}
	}
	if len(tools) != len(toolCases) {
		t.Errorf("%d tools, %d cases", len(tools), len(toolCases))
	}
	for name, run := range toolCases {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			run(t, s, build(t, s, "email", "toolsets: [all]"))
		})
	}
}

// The toolsets select the tools, with the classes each write needs; the
// defaults leave organize out.
func TestToolsets(t *testing.T) {
	s := newStandin(t)
	names := func(extra string) (string, map[string]legate.Class) {
		in := build(t, s, "email", extra)
		var out []string
		classes := map[string]legate.Class{}
		for _, tool := range in.c.Tools() {
			out = append(out, tool.Toolset+"/"+tool.Name)
			classes[tool.Name] = tool.Class
		}
		return strings.Join(out, " "), classes
	}
	def, _ := names("")
	if def != "read/search read/read read/folders read/attachment send/draft send/send send/reply" {
		t.Errorf("defaults: %s", def)
	}
	all, classes := names("toolsets: [all]")
	if !strings.Contains(all, "organize/mark organize/move organize/archive organize/delete") {
		t.Errorf("all: %s", all)
	}
	want := map[string]legate.Class{"search": legate.ClassRead, "read": legate.ClassRead, "folders": legate.ClassRead, "attachment": legate.ClassRead,
		"draft": legate.ClassDraft, "send": legate.ClassWrite, "reply": legate.ClassWrite, "mark": legate.ClassWrite, "move": legate.ClassWrite,
		"archive": legate.ClassWrite, "delete": legate.ClassDestructive}
	for name, c := range want {
		if classes[name] != c {
			t.Errorf("%s: class %s, want %s", name, classes[name], c)
		}
	}
	ct, _ := connectors.Lookup("email")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config(s, "toolsets: [nope]")), &node); err != nil {
		t.Fatal(err)
	}
	if _, err := connectors.Build(ct, "bad", &node, "config"); err == nil || !strings.Contains(err.Error(), "organize") {
		t.Errorf("unknown toolset: %v", err)
	}
}

func parse(t testing.TB, data []byte) *mail.Message {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
