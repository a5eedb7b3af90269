package email_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
	"github.com/legate-mcp/legate/provenance"
)

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{
		Type: "email",
		Config: "imap_host: 127.0.0.1\nimap_port: 9\nimap_username: a@example.com\nsmtp_host: 127.0.0.1\nsmtp_port: 9\n" +
			"smtp_username: a@example.com\nfrom: a@example.com\nallow_private_networks: true",
		Credentials: map[string]string{"imap_password": imapPassword, "smtp_password": smtpPassword},
	})
}

var day = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// seedInbox puts n plain messages in INBOX, message i received i hours
// after day; the odd ones are from Bob, the even ones from Carol.
func seedInbox(t testing.TB, s *standin, n int) {
	for i := range n {
		from := "Carol <carol@example.com>"
		if i%2 == 1 {
			from = "Bob <bob@example.com>"
		}
		var flags []imap.Flag
		if i%3 == 0 {
			flags = []imap.Flag{imap.FlagSeen}
		}
		s.seed(t, "INBOX", plain(from, fmt.Sprintf("report %d", i), fmt.Sprintf("Body of report %d.\nSecond line.", i), i), day.Add(time.Duration(i)*time.Hour), flags...)
	}
}

// walk runs search with args page by page and returns the subjects and
// the pages.
func walk(t *testing.T, in *instance, tenant, args string) (subjects []string, pages []saas.List[model.Message]) {
	t.Helper()
	cursor := ""
	for range 100 {
		a := strings.TrimSuffix(args, "}")
		if cursor != "" {
			if a != "{" {
				a += ","
			}
			a += fmt.Sprintf(`"cursor":%q`, cursor)
		}
		res, err := in.call(t, tenant, "search", a+"}", "")
		l := must[saas.List[model.Message]](t, res, err)
		pages = append(pages, l)
		for _, m := range l.Items {
			subjects = append(subjects, m.Subject)
		}
		if l.NextCursor == "" {
			return subjects, pages
		}
		cursor = l.NextCursor
	}
	t.Fatal("more than 100 pages")
	return nil, nil
}

func TestSearchWalksPagesNewestFirst(t *testing.T) {
	s := newStandin(t)
	seedInbox(t, s, 25)
	in := build(t, s, "email", "")
	subjects, pages := walk(t, in, "t1", `{"limit":7}`)
	if len(pages) != 4 || len(subjects) != 25 || subjects[0] != "report 24" || subjects[24] != "report 0" {
		t.Fatalf("%d pages: %v", len(pages), subjects)
	}
	seen := map[string]bool{}
	for _, s := range subjects {
		if seen[s] {
			t.Fatalf("%s twice", s)
		}
		seen[s] = true
	}
	m := pages[0].Items[0]
	if m.Contract != "message.v1" || m.Provider != "email" || m.Instance != "email" || !strings.HasPrefix(m.Ref, "message://") ||
		m.ExternalID != "INBOX;UIDVALIDITY=1/;UID=25" || m.Sender == nil || m.Sender.ID != "carol@example.com" || m.Sender.Name != "Carol" ||
		m.Snippet != "Body of report 24. Second line." || m.Text != "" || !m.ReceivedAt.Equal(day.Add(24*time.Hour)) ||
		m.SentAt.IsZero() || m.ProviderMetadata["message_id"] != "<m24@example.com>" {
		t.Errorf("message %+v", m)
	}
	if len(m.Recipients) != 2 || m.Recipients[0].ID != user || m.Recipients[0].Role != "to" || m.Recipients[1].ID != "ops@example.com" || m.Recipients[1].Role != "cc" {
		t.Errorf("recipients %+v", m.Recipients)
	}
	if l := pages[3].Items[len(pages[3].Items)-1].Labels; len(l) != 1 || l[0] != "seen" {
		t.Errorf("labels of report 0: %v", l)
	}
	if pages[0].NextCursor == "v1/1/19/" || strings.HasPrefix(pages[0].NextCursor, "v1/") {
		t.Errorf("next_cursor %q is not opaque", pages[0].NextCursor)
	}

	// The query narrows every page alike.
	for args, want := range map[string]string{
		`{"from":"bob","limit":3}`:                                      "report 23,report 21,report 19,report 17,report 15,report 13,report 11,report 9,report 7,report 5,report 3,report 1",
		`{"subject":"report 1","limit":5}`:                              "report 19,report 18,report 17,report 16,report 15,report 14,report 13,report 12,report 11,report 10,report 1",
		`{"text":"of report 7.","limit":5}`:                             "report 7",
		`{"since":"2026-03-03","before":"2026-03-04","from":"carol"}`:   "report 24,report 22,report 20,report 18,report 16",
		`{"unseen":true,"from":"carol","since":"2026-03-03T00:00:00Z"}`: "report 22,report 20,report 16",
		`{"folder":"Archive"}`:                                          "",
	} {
		got, _ := walk(t, in, "t1", args)
		if strings.Join(got, ",") != want {
			t.Errorf("%s: got %v; want %s", args, got, want)
		}
	}
}

func TestSearchRefusesBadArguments(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "email", "")
	for args, code := range map[string]legate.Code{
		`{"since":"yesterday"}`:  legate.CodeInvalidArgument,
		`{"limit":-1}`:           legate.CodeInvalidArgument,
		`{"folder":"Nowhere"}`:   legate.CodeNotFound,
		`{"cursor":"v1/1/19/x"}`: legate.CodeInvalidArgument,
	} {
		_, err := in.call(t, "t1", "search", args, "")
		wantCode(t, err, code)
	}
}

func TestCursorsAndRefsStayWhereTheyWereMade(t *testing.T) {
	s := newStandin(t)
	seedInbox(t, s, 5)
	a, b := build(t, s, "email", ""), build(t, s, "email-2", "")
	res, err := a.call(t, "t1", "search", `{"limit":2}`, "")
	l := must[saas.List[model.Message]](t, res, err)
	next := fmt.Sprintf(`{"limit":2,"cursor":%q}`, l.NextCursor)
	if _, err := a.call(t, "t1", "search", next, ""); err != nil {
		t.Fatalf("the same tenant and instance: %v", err)
	}
	_, err = a.call(t, "t2", "search", next, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	_, err = b.call(t, "t1", "search", next, "")
	wantCode(t, err, legate.CodeInvalidArgument)
	// The same cursor with another query is refused, not misapplied.
	_, err = a.call(t, "t1", "search", fmt.Sprintf(`{"limit":2,"from":"bob","cursor":%q}`, l.NextCursor), "")
	wantCode(t, err, legate.CodeInvalidArgument)

	ref := fmt.Sprintf(`{"message":%q}`, l.Items[0].Ref)
	if _, err := a.call(t, "t1", "read", ref, ""); err != nil {
		t.Fatal(err)
	}
	_, err = a.call(t, "t2", "read", ref, "")
	wantCode(t, err, legate.CodeNotFound)
	_, err = b.call(t, "t1", "read", ref, "")
	wantCode(t, err, legate.CodeNotFound)
	_, err = a.call(t, "t1", "read", `{"message":"INBOX;UIDVALIDITY=1/;UID=1"}`, "")
	wantCode(t, err, legate.CodeNotFound) // a bare IMAP id
}

// The folder deleted and created again gets a new UIDVALIDITY: an old
// cursor is a CONFLICT and an old ref is NOT_FOUND, never another message.
func TestRebuiltFolderInvalidatesCursorsAndRefs(t *testing.T) {
	s := newStandin(t)
	for i := range 3 {
		s.seed(t, "Archive", plain("bob@example.com", fmt.Sprintf("old %d", i), "x", i), day)
	}
	in := build(t, s, "email", "")
	res, err := in.call(t, "t1", "search", `{"folder":"Archive","limit":1}`, "")
	l := must[saas.List[model.Message]](t, res, err)
	if err := s.user.Delete("Archive"); err != nil {
		t.Fatal(err)
	}
	if err := s.user.Create("Archive", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s.seed(t, "Archive", plain("eve@example.com", fmt.Sprintf("new %d", i), "x", i), day)
	}
	_, err = in.call(t, "t1", "search", fmt.Sprintf(`{"folder":"Archive","limit":1,"cursor":%q}`, l.NextCursor), "")
	wantCode(t, err, legate.CodeConflict)
	_, err = in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, l.Items[0].Ref), "")
	wantCode(t, err, legate.CodeNotFound)
}

const multipart = `From: Bob <bob@example.com>
To: ann@example.com
Subject: =?utf-8?q?Quarterly_r=C3=A9sum=C3=A9?=
Date: Mon, 02 Mar 2026 10:00:00 +0000
Message-ID: <mp1@example.com>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: quoted-printable

Caf=E9 numbers attached.
--inner
Content-Type: text/html; charset=utf-8

<p>Caf&eacute; <b>numbers</b> attached.</p>
--inner--
--outer
Content-Type: application/pdf; name="q1.pdf"
Content-Disposition: attachment; filename="q1.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoK
--outer--
`

const htmlOnly = `From: news@example.com
To: ann@example.com
Subject: Newsletter
Date: Mon, 02 Mar 2026 11:00:00 +0000
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: base64

PGh0bWw+PGhlYWQ+PHN0eWxlPnAge2NvbG9yOnJlZH08L3N0eWxlPjwvaGVhZD48Ym9keT48aDE+
SGVsbG88L2gxPjxwPkZpcnN0ICZhbXA7IHNlY29uZDwvcD48c2NyaXB0PmFsZXJ0KDEpPC9zY3Jp
cHQ+PHA+QnllPC9wPjwvYm9keT48L2h0bWw+
`

func TestReadGivesTextAndAttachments(t *testing.T) {
	s := newStandin(t)
	s.seed(t, "INBOX", multipart, day)
	s.seed(t, "INBOX", htmlOnly, day.Add(time.Hour))
	s.seed(t, "INBOX", plain("bob@example.com", "long", strings.Repeat("0123456789", 300), 3), day.Add(2*time.Hour))
	in := build(t, s, "email", "max_body_bytes: 1024")
	res, err := in.call(t, "t1", "search", `{}`, "")
	l := must[saas.List[model.Message]](t, res, err)
	if len(l.Items) != 3 || l.Items[2].Subject != "Quarterly résumé" || l.Items[2].Snippet != "Café numbers attached." || l.Items[1].Snippet != "Hello First & second Bye" {
		t.Fatalf("search %+v", l.Items)
	}
	if res.Meta != nil { // many senders: none named the author
		t.Errorf("search names %v", res.Meta)
	}
	read := func(ref string) model.Message {
		res, err := in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, ref), "")
		return must[model.Message](t, res, err)
	}
	mp := read(l.Items[2].Ref)
	if mp.Text != "Café numbers attached." || mp.TextTruncated || mp.ProviderMetadata["text_source"] != "text/plain" {
		t.Errorf("multipart: %q %v %v", mp.Text, mp.TextTruncated, mp.ProviderMetadata)
	}
	if len(mp.Attachments) != 1 || mp.Attachments[0] != (model.Attachment{Name: "q1.pdf", MimeType: "application/pdf", Size: mp.Attachments[0].Size}) || mp.Attachments[0].Size < 40 {
		t.Errorf("attachments %+v", mp.Attachments)
	}
	h := read(l.Items[1].Ref)
	if h.Text != "Hello\n\nFirst & second\n\nBye" || h.ProviderMetadata["text_source"] != "text/html converted to text" || len(h.Attachments) != 0 {
		t.Errorf("html: %q %v", h.Text, h.ProviderMetadata)
	}
	long := read(l.Items[0].Ref)
	if len(long.Text) != 1024 || !long.TextTruncated {
		t.Errorf("long: %d bytes, truncated %v", len(long.Text), long.TextTruncated)
	}
	// read names its sender as the author of what it returns.
	res, err = in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, l.Items[0].Ref), "")
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := provenance.AuthorIn(res.Meta); !ok || a != "bob@example.com" {
		t.Errorf("read names %q (%v); want bob@example.com", a, ok)
	}
	// Reading does not mark the message seen.
	res, err = in.call(t, "t1", "search", `{"unseen":true}`, "")
	if l := must[saas.List[model.Message]](t, res, err); len(l.Items) != 3 {
		t.Errorf("%d unseen after reading; want 3", len(l.Items))
	}
}

func TestDraftIsSavedOnce(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "email", "")
	args := `{"to":["Bob <bob@example.com>"],"cc":["ops@example.com"],"subject":"Plan","text":"Draft body"}`
	res, err := in.call(t, "t1", "draft", args, "op-draft")
	d := must[model.Message](t, res, err)
	if s.count(t, "Drafts") != 1 || !strings.HasPrefix(d.Ref, "message://") || d.Subject != "Plan" || d.Text != "Draft body" || len(d.Recipients) != 2 {
		t.Fatalf("draft %+v; %d in Drafts", d, s.count(t, "Drafts"))
	}
	// The draft is in the folder, readable by its ref, with its
	// Message-ID derived from the operation key.
	res, err = in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, d.Ref), "")
	r := must[model.Message](t, res, err)
	if r.Subject != "Plan" || r.Text != "Draft body" || r.ProviderMetadata["message_id"] != d.ProviderMetadata["message_id"] || !strings.Contains(strings.Join(r.Labels, ","), "draft") {
		t.Fatalf("read back %+v", r)
	}
	// A retry returns the same draft; so does one whose operation record
	// was lost, found by its Message-ID instead of appended again.
	res, err = in.call(t, "t1", "draft", args, "op-draft")
	if again := must[model.Message](t, res, err); again.Ref != d.Ref {
		t.Fatalf("retry gave %s; want %s", again.Ref, d.Ref)
	}
	in.ops = saas.NewMemoryOperations()
	res, err = in.call(t, "t1", "draft", args, "op-draft")
	if again := must[model.Message](t, res, err); again.Ref != d.Ref {
		t.Fatalf("retry without the record gave %s; want %s", again.Ref, d.Ref)
	}
	if n := s.count(t, "Drafts"); n != 1 {
		t.Fatalf("%d drafts; want 1", n)
	}
	// Another operation is another draft.
	if _, err := in.call(t, "t1", "draft", args, "op-draft-2"); err != nil {
		t.Fatal(err)
	}
	if n := s.count(t, "Drafts"); n != 2 {
		t.Fatalf("%d drafts; want 2", n)
	}
	for _, bad := range []string{`{"to":[],"subject":"x","text":"y"}`, `{"to":["not an address"],"subject":"x","text":"y"}`, `{"to":["a@example.com"],"subject":"x\r\nBcc: eve@example.com","text":"y"}`} {
		_, err := in.call(t, "t1", "draft", bad, "op-bad")
		wantCode(t, err, legate.CodeInvalidArgument)
	}
}

func TestDraftToAMissingFolderIsNotFound(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "email", "drafts_folder: Brouillons")
	_, err := in.call(t, "t1", "draft", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-1")
	wantCode(t, err, legate.CodeNotFound)
}

// A server without UIDPLUS does not say which UID an APPEND got: the
// draft is then found by its Message-ID.
func TestDraftWithoutUIDPlus(t *testing.T) {
	s := newStandinWith(t, imap.CapSet{imap.CapIMAP4rev1: {}}, func(s imapserver.Session) imapserver.Session { return noAppendUID{s} })
	in := build(t, s, "email", "")
	res, err := in.call(t, "t1", "draft", `{"to":["bob@example.com"],"subject":"Plan","text":"Draft body"}`, "op-1")
	d := must[model.Message](t, res, err)
	res, err = in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, d.Ref), "")
	if r := must[model.Message](t, res, err); r.Text != "Draft body" || s.count(t, "Drafts") != 1 {
		t.Fatalf("read back %+v, %d drafts", r, s.count(t, "Drafts"))
	}
}

// A rotated password is used at once: a pooled connection logged in with
// the old one is not reused for it, nor for anyone still holding the old.
func TestRotatedPasswordIsNotServedByPooledConnections(t *testing.T) {
	s := newStandin(t)
	seedInbox(t, s, 2)
	in := build(t, s, "email", "")
	if _, err := in.call(t, "t1", "search", `{}`, ""); err != nil {
		t.Fatal(err)
	}
	rotated := imapmemserver.NewUser(user, imapPassword+"-2")
	for _, f := range []string{"INBOX", "Drafts"} {
		rotated.Create(f, nil)
	}
	s.mem.AddUser(rotated)
	in.creds["imap_password"] = imapPassword + "-2"
	if _, err := in.call(t, "t1", "search", `{}`, ""); err != nil {
		t.Fatalf("with the new password: %v", err)
	}
	in.creds["imap_password"] = imapPassword
	_, err := in.call(t, "t1", "search", `{}`, "")
	wantCode(t, err, legate.CodeAuthExpired)
}

// cutter is a TCP proxy to addr whose connections can all be cut, as a
// server dropping idle clients does.
type cutter struct {
	addr  string
	mu    sync.Mutex
	conns []net.Conn
	dials int
	// gone receives once per client connection that the client closed.
	gone chan struct{}
}

func newCutter(t *testing.T, to string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := &cutter{addr: ln.Addr().String(), gone: make(chan struct{}, 100)}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", to)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.dials++
			c.mu.Unlock()
			go func() {
				io.Copy(out, in)
				out.Close()
				c.gone <- struct{}{}
			}()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

func (c *cutter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dials
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

// Calls reuse one IMAP connection; one the server dropped meanwhile is
// replaced within the call, without a retry or an error.
func TestPooledConnectionIsReusedAndReplaced(t *testing.T) {
	s := newStandin(t)
	seedInbox(t, s, 3)
	proxy := newCutter(t, s.imapAddr)
	s.imapAddr = proxy.addr
	in := build(t, s, "email", "")
	retries := 0
	run := func() {
		t.Helper()
		res, err := in.tool(t, "search").Run(context.Background(), &connectors.Call{Tool: "search", Args: json.RawMessage(`{}`),
			Caller: connectors.Caller{Tenant: "t1"}, Credentials: in.creds, Key: func() []byte { return in.key }, Retried: func(string) { retries++ }})
		if l := must[saas.List[model.Message]](t, res, err); len(l.Items) != 3 {
			t.Fatalf("%d items", len(l.Items))
		}
	}
	for range 5 {
		run()
	}
	if n := proxy.count(); n != 1 {
		t.Fatalf("%d connections for 5 calls; want 1", n)
	}
	proxy.cut()
	run()
	if n := proxy.count(); n != 2 || retries != 0 {
		t.Fatalf("%d connections, %d retries after the cut; want 2 and 0", n, retries)
	}
	<-proxy.gone // the connection cut
	// Closing the instance closes its idle connection.
	in.c.(connectors.Closer).Close()
	select {
	case <-proxy.gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the idle connection is still open after Close")
	}
}

// A long base64 body is fetched only in part: the cut is decoded, cut
// again on a character boundary, and marked.
func TestReadCutsALongEncodedBodyCleanly(t *testing.T) {
	s := newStandin(t)
	text := strings.Repeat("déjà vu — ", 1000)
	enc := base64.StdEncoding.EncodeToString([]byte(text))
	var lines []string
	for len(enc) > 76 {
		lines, enc = append(lines, enc[:76]), enc[76:]
	}
	lines = append(lines, enc)
	s.seed(t, "INBOX", "From: bob@example.com\nTo: ann@example.com\nSubject: long\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"+strings.Join(lines, "\n")+"\n", day)
	in := build(t, s, "email", "max_body_bytes: 1024")
	res, err := in.call(t, "t1", "search", `{}`, "")
	l := must[saas.List[model.Message]](t, res, err)
	if !strings.HasPrefix(l.Items[0].Snippet, "déjà vu — déjà vu") || !strings.HasSuffix(l.Items[0].Snippet, "…") {
		t.Errorf("snippet %q", l.Items[0].Snippet)
	}
	res, err = in.call(t, "t1", "read", fmt.Sprintf(`{"message":%q}`, l.Items[0].Ref), "")
	m := must[model.Message](t, res, err)
	if len(m.Text) > 1024 || len(m.Text) < 1000 || !utf8.ValidString(m.Text) || !strings.HasPrefix(text, m.Text) || !m.TextTruncated {
		t.Fatalf("%d bytes, valid %v, prefix %v, truncated %v", len(m.Text), utf8.ValidString(m.Text), strings.HasPrefix(text, m.Text), m.TextTruncated)
	}
}
