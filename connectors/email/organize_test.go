package email_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/email/mailbox"
)

// The tools that take a message refuse a ref of another tenant or
// instance, and say a message deleted meanwhile is gone.
func TestMessageToolsRefuseForeignAndGoneRefs(t *testing.T) {
	s := newStandin(t)
	seedInbox(t, s, 2)
	in := build(t, s, "email", "toolsets: [all]")
	other := build(t, s, "other", "toolsets: [all]")
	ref := refOf(t, in, "INBOX", "report 1")
	gone := refOf(t, in, "INBOX", "report 0")
	if _, err := in.call(t, "t1", "delete", fmt.Sprintf(`{"message":%q}`, gone), "op-gone"); err != nil {
		t.Fatal(err)
	}
	for tool, args := range map[string]string{
		"read": `{"message":%q}`, "attachment": `{"message":%q,"part":"1"}`, "mark": `{"message":%q,"read":true}`,
		"move": `{"message":%q,"folder":"Archive"}`, "archive": `{"message":%q}`, "delete": `{"message":%q}`, "reply": `{"message":%q,"text":"x"}`,
	} {
		_, err := in.call(t, "t2", tool, fmt.Sprintf(args, ref), "op-t2-"+tool)
		wantCode(t, err, legate.CodeNotFound)
		_, err = other.call(t, "t1", tool, fmt.Sprintf(args, ref), "op-other-"+tool)
		wantCode(t, err, legate.CodeNotFound)
		_, err = in.call(t, "t1", tool, fmt.Sprintf(args, gone), "op-gone-"+tool)
		if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "gone") {
			t.Errorf("%s: %q", tool, le.Message)
		}
	}
	if s.count(t, "INBOX") != 1 || len(s.delivered()) != 0 {
		t.Fatalf("INBOX %d, %d deliveries", s.count(t, "INBOX"), len(s.delivered()))
	}
}

// Archive goes to archive_folder when set; without it and without an
// \Archive folder it says what to set. Delete without a trash folder
// expunges; on a server without UIDPLUS it only flags the message, as
// EXPUNGE would take every message flagged \Deleted with it.
func TestArchiveAndDeleteWithoutSpecialFolders(t *testing.T) {
	s := newStandin(t)
	seedInbox(t, s, 3)
	if err := s.user.Create("Kept", nil); err != nil {
		t.Fatal(err)
	}
	in := build(t, s, "email", "toolsets: [all]\narchive_folder: Kept")
	res, err := in.call(t, "t1", "archive", fmt.Sprintf(`{"message":%q}`, refOf(t, in, "INBOX", "report 2")), "op-1")
	if c := must[mailbox.Change](t, res, err); c.Folder != "Kept" || s.count(t, "Kept") != 1 {
		t.Fatalf("%+v", c)
	}
	for _, f := range []string{"Archive", "Trash"} {
		if err := s.user.Delete(f); err != nil {
			t.Fatal(err)
		}
	}
	plain := build(t, s, "plain", "toolsets: [all]")
	_, err = plain.call(t, "t1", "archive", fmt.Sprintf(`{"message":%q}`, refOf(t, plain, "INBOX", "report 1")), "op-2")
	if le := wantCode(t, err, legate.CodeNotFound); !strings.Contains(le.Message, "archive_folder") {
		t.Errorf("%q", le.Message)
	}
	res, err = plain.call(t, "t1", "delete", fmt.Sprintf(`{"message":%q}`, refOf(t, plain, "INBOX", "report 1")), "op-3")
	if c := must[mailbox.Change](t, res, err); c.Action != "expunged" || s.count(t, "INBOX") != 1 || !strings.Contains(res.Text, "expunged") {
		t.Fatalf("%+v", c)
	}

	old := newStandinWith(t, imap.CapSet{imap.CapIMAP4rev1: {}}, func(s imapserver.Session) imapserver.Session { return noAppendUID{s} })
	seedInbox(t, old, 2)
	if err := old.user.Delete("Trash"); err != nil {
		t.Fatal(err)
	}
	in = build(t, old, "email", "toolsets: [all]")
	res, err = in.call(t, "t1", "delete", fmt.Sprintf(`{"message":%q}`, refOf(t, in, "INBOX", "report 1")), "op-4")
	if c := must[mailbox.Change](t, res, err); c.Action != "flagged deleted" || old.count(t, "INBOX") != 2 || old.writeCount("expunge") != 0 {
		t.Fatalf("%+v", c)
	}
	if fmt.Sprint(old.flags(t, "INBOX", "report 1")) != `[\Deleted]` {
		t.Fatalf("flags %v", old.flags(t, "INBOX", "report 1"))
	}
}

// An attachment past max_attachment_bytes is refused before it is
// fetched; attachments to send past it together too.
func TestAttachmentLimits(t *testing.T) {
	s := newStandin(t)
	s.seed(t, "INBOX", withAttachment("big", make([]byte, 3000)), day)
	in := build(t, s, "email", "toolsets: [all]\nmax_attachment_bytes: 2048")
	_, err := in.call(t, "t1", "attachment", fmt.Sprintf(`{"message":%q,"part":"2"}`, refOf(t, in, "INBOX", "big")), "")
	if le := wantCode(t, err, legate.CodeInvalidArgument); !strings.Contains(le.Message, "max_attachment_bytes") {
		t.Errorf("%q", le.Message)
	}
	big := strings.Repeat("QUFB", 700) // 2100 bytes
	for _, tool := range []string{"send", "draft"} {
		_, err := in.call(t, "t1", tool, `{"to":["bob@example.com"],"subject":"s","text":"x","attachments":[{"name":"a.bin","content_base64":"`+big+`"}]}`, "op-"+tool)
		wantCode(t, err, legate.CodeInvalidArgument)
		_, err = in.call(t, "t1", tool, `{"to":["bob@example.com"],"subject":"s","text":"x","attachments":[{"name":"../a","content_base64":"QQ=="}]}`, "op2-"+tool)
		wantCode(t, err, legate.CodeInvalidArgument)
	}
	if len(s.delivered()) != 0 || s.count(t, "Drafts") != 0 {
		t.Fatal("a refused message went out")
	}
}

// With markers off, the default, nothing of Legate's is in what the
// writes leave in the mailbox or deliver; with markers on, the
// Message-ID names the operation.
func TestNoMarkersByDefault(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := newStandin(t)
		s.seed(t, "INBOX", plain("bob@example.com", "question", "x", 1), day)
		in := build(t, s, "email", fmt.Sprintf("markers: %v", on))
		ref := refOf(t, in, "INBOX", "question")
		for i, c := range []struct{ tool, args string }{
			{"send", sendArgs}, {"draft", sendArgs},
			{"reply", fmt.Sprintf(`{"message":%q,"html":"<p>yes</p>"}`, ref)}, {"reply", fmt.Sprintf(`{"message":%q,"text":"later","draft":true}`, ref)},
		} {
			if _, err := in.call(t, "t1", c.tool, c.args, fmt.Sprint("op-", i)); err != nil {
				t.Fatal(err)
			}
		}
		var stored []string
		for _, d := range s.delivered() {
			stored = append(stored, string(d.Data))
		}
		stored = append(stored, s.raw(t, "Drafts")...)
		if len(stored) != 4 {
			t.Fatalf("%d messages", len(stored))
		}
		for _, m := range stored {
			marked := strings.Contains(m, "lg1-")
			if marked != on || !on && strings.Contains(strings.ToLower(m), "legate") {
				t.Errorf("markers %v: message\n%s", on, m)
			}
		}
	}
}

// raw is every message of folder as the server keeps it, fetched over
// IMAP as a mail client would.
func (s *standin) raw(t testing.TB, folder string) []string {
	t.Helper()
	c, err := imapclient.DialInsecure(s.imapAddr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, imapPassword).Wait(); err != nil {
		t.Fatal(err)
	}
	sel, err := c.Select(folder, nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	section := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(imap.SeqSetNum(seq(sel.NumMessages)...), &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bufs {
		out = append(out, string(b.FindBodySection(section)))
	}
	return out
}

func seq(n uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i + 1)
	}
	return out
}

// refusing is a session whose server refuses every change with err.
type refusing struct {
	imapserver.SessionIMAP4rev2
	err func() error
}

func (r refusing) Move(w *imapserver.MoveWriter, set imap.NumSet, dest string) error {
	if err := r.err(); err != nil {
		return err
	}
	return r.SessionIMAP4rev2.Move(w, set, dest)
}

func (r refusing) Store(w *imapserver.FetchWriter, set imap.NumSet, flags *imap.StoreFlags, opts *imap.StoreOptions) error {
	if err := r.err(); err != nil {
		return err
	}
	return r.SessionIMAP4rev2.Store(w, set, flags, opts)
}

// The server's refusals of a change map to their codes: NOPERM is
// PERMISSION_DENIED, not retried; UNAVAILABLE is TRANSIENT, retried and
// then done.
func TestOrganizeRefusalsMapToCodes(t *testing.T) {
	for _, tc := range []struct {
		code  imap.ResponseCode
		want  legate.Code
		tries int
	}{{imap.ResponseCodeNoPerm, legate.CodePermissionDenied, 1}, {imap.ResponseCodeUnavailable, "", 2}} {
		t.Run(string(tc.code), func(t *testing.T) {
			refusals := 0
			refuse := func() error {
				if refusals++; refusals == 1 || tc.want != "" {
					return &imap.Error{Type: imap.StatusResponseTypeNo, Code: tc.code, Text: "no"}
				}
				return nil
			}
			s := newStandinWith(t, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}}, func(sess imapserver.Session) imapserver.Session {
				return refusing{SessionIMAP4rev2: sess.(imapserver.SessionIMAP4rev2), err: refuse}
			})
			seedInbox(t, s, 1)
			in := build(t, s, "email", "toolsets: [all]")
			ref := refOf(t, in, "INBOX", "report 0")
			for _, c := range [][2]string{{"mark", `{"message":%q,"flagged":true}`}, {"move", `{"message":%q,"folder":"Archive"}`}} {
				tool, args := c[0], c[1]
				refusals = 0
				_, err := in.call(t, "t1", tool, fmt.Sprintf(args, ref), "op-"+tool)
				if tc.want != "" {
					wantCode(t, err, tc.want)
				} else if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if refusals != tc.tries {
					t.Errorf("%s: %d tries, want %d", tool, refusals, tc.tries)
				}
			}
			if done := s.count(t, "Archive") == 1; done != (tc.want == "") {
				t.Errorf("moved: %v", done)
			}
		})
	}
}
