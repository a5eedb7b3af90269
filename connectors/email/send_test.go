package email_test

import (
	"bytes"
	"fmt"
	"net/mail"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/legate-mcp/legate"
	email "github.com/legate-mcp/legate/connectors/email"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

const sendArgs = `{"to":["Bob <bob@example.com>"],"cc":["ops@example.com"],"bcc":["audit@example.com"],"subject":"Deploy","text":"Deploy done."}`

func TestSendDeliversOnce(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "email", "")
	res, err := in.call(t, "t1", "send", sendArgs, "op-1")
	out := must[email.Sent](t, res, err)
	got := s.delivered()
	if len(got) != 1 || out.Delivery != "accepted" || out.Subject != "Deploy" || out.ProviderMetadata["message_id"] != got[0].MessageID {
		t.Fatalf("sent %+v; delivered %+v", out, got)
	}
	d := got[0]
	if d.From != user || strings.Join(d.To, ",") != "bob@example.com,ops@example.com,audit@example.com" {
		t.Errorf("envelope from %s to %v", d.From, d.To)
	}
	body := string(d.Data)
	if strings.Contains(body, "audit@example.com") || !strings.Contains(body, "Deploy done.") || !strings.Contains(body, "Subject: Deploy") {
		t.Errorf("message:\n%s", body)
	}
	// Markers are off by default: the Message-ID, the same for every retry
	// of the operation, is an opaque digest, with nothing of Legate's in it.
	if strings.Contains(d.MessageID, "lg1-") || strings.Contains(strings.ToLower(body), "legate") || !strings.HasSuffix(d.MessageID, "@example.com>") || len(d.MessageID) != len("<@example.com>")+32 {
		t.Errorf("Message-ID %s; message:\n%s", d.MessageID, body)
	}
	// The same operation again returns the first outcome and sends nothing.
	res, err = in.call(t, "t1", "send", sendArgs, "op-1")
	if again := must[email.Sent](t, res, err); again.Ref != out.Ref || again.Delivery != "accepted" || len(s.delivered()) != 1 {
		t.Fatalf("replay: %+v, %d deliveries", again, len(s.delivered()))
	}
	// Another operation is another message, with another Message-ID.
	if _, err := in.call(t, "t1", "send", sendArgs, "op-2"); err != nil {
		t.Fatal(err)
	}
	if got := s.delivered(); len(got) != 2 || got[1].MessageID == got[0].MessageID {
		t.Fatalf("deliveries %+v", got)
	}
}

// The server takes the message, then the connection drops before its
// 250: the connector must not send it again, and says so.
func TestLostReplyIsNotSentAgain(t *testing.T) {
	for name, extra := range map[string]string{"retried within the call": "", "retried by the client": "max_attempts: 1"} {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			in := build(t, s, "email", extra)
			s.onData = func(n int, _ delivery) error {
				if n == 1 {
					return errDrop
				}
				return nil
			}
			res, err := in.call(t, "t1", "send", sendArgs, "op-lost")
			if extra != "" {
				wantCode(t, err, legate.CodeTransient)
				res, err = in.call(t, "t1", "send", sendArgs, "op-lost")
			}
			out := must[email.Sent](t, res, err)
			if out.Delivery != "unconfirmed" || !strings.Contains(res.Text, "not sent again") {
				t.Errorf("delivery %q: %s", out.Delivery, res.Text)
			}
			if n := len(s.delivered()); n != 1 {
				t.Fatalf("%d deliveries; want 1", n)
			}
			// Later retries keep the outcome.
			res, err = in.call(t, "t1", "send", sendArgs, "op-lost")
			if again := must[email.Sent](t, res, err); again.Delivery != "unconfirmed" || len(s.delivered()) != 1 {
				t.Fatalf("replay %+v, %d deliveries", again, len(s.delivered()))
			}
		})
	}
}

// A thousand sends, each of whose first attempt is taken by the server
// and loses its answer; every other call gives up after that attempt and
// is called again by the client with the same idempotency key, as the
// gateway does with an approved call. Each Message-ID arrives once.
func TestNoDuplicatesOverAThousandLostReplies(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 SMTP sessions")
	}
	s := newStandin(t)
	retrying := build(t, s, "email", "")
	giving := build(t, s, "email", "max_attempts: 1")
	giving.ops, giving.key = retrying.ops, retrying.key
	seen := map[string]bool{}
	s.onData = func(_ int, d delivery) error {
		if !seen[d.MessageID] {
			seen[d.MessageID] = true
			return errDrop
		}
		return nil
	}
	const sends = 1000
	for i := range sends {
		in, op := retrying, fmt.Sprintf("op-%d", i)
		if i%2 == 1 {
			in = giving
		}
		args := fmt.Sprintf(`{"to":["bob@example.com"],"subject":"n %d","text":"x"}`, i)
		res, err := in.call(t, "t1", "send", args, op)
		if i%2 == 1 {
			wantCode(t, err, legate.CodeTransient)
			res, err = in.call(t, "t1", "send", args, op)
		}
		if out := must[email.Sent](t, res, err); out.Delivery != "unconfirmed" || out.Subject != fmt.Sprintf("n %d", i) {
			t.Fatalf("send %d: %+v", i, out)
		}
	}
	per := map[string]int{}
	for _, d := range s.delivered() {
		per[d.MessageID]++
	}
	dups := 0
	for _, n := range per {
		dups += n - 1
	}
	if len(s.delivered()) != sends || len(per) != sends || dups != 0 {
		t.Fatalf("%d deliveries of %d Message-IDs, %d duplicates; want %d, %d, 0", len(s.delivered()), len(per), dups, sends, sends)
	}
}

func TestSMTPRefusalsMapToTheirClass(t *testing.T) {
	refuse := func(code int, enh smtp.EnhancedCode, msg string) error {
		return &smtp.SMTPError{Code: code, EnhancedCode: enh, Message: msg}
	}
	tests := map[string]struct {
		rcpt, data error
		code       legate.Code
		attempts   int
	}{
		"4xx at RCPT":        {rcpt: refuse(450, smtp.EnhancedCode{4, 2, 0}, "mailbox busy"), code: legate.CodeTransient, attempts: 3},
		"550 at RCPT":        {rcpt: refuse(550, smtp.EnhancedCode{5, 1, 1}, "no such user"), code: legate.CodeInvalidArgument, attempts: 1},
		"554 5.7.1 at DATA":  {data: refuse(554, smtp.EnhancedCode{5, 7, 1}, "rejected by policy"), code: legate.CodePermissionDenied, attempts: 1},
		"552 at DATA":        {data: refuse(552, smtp.EnhancedCode{5, 3, 4}, "message too big"), code: legate.CodeInvalidArgument, attempts: 1},
		"451 always at DATA": {data: refuse(451, smtp.EnhancedCode{4, 3, 0}, "try later"), code: legate.CodeTransient, attempts: 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			in := build(t, s, "email", "")
			rcpts := 0
			s.onRcpt = func(string) error { rcpts++; return tc.rcpt }
			datas := 0
			s.onData = func(int, delivery) error { datas++; return tc.data }
			res, err := in.call(t, "t1", "send", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-1")
			le := wantCode(t, err, tc.code)
			if n := max(rcpts, datas); n != tc.attempts {
				t.Errorf("%d attempts; want %d", n, tc.attempts)
			}
			if !strings.HasPrefix(le.Message, "email: ") || len(s.delivered()) != 0 {
				t.Errorf("message %q, %d delivered", le.Message, len(s.delivered()))
			}
			noSecret(t, texts(res, err)...)
		})
	}
}

// A 451 after the end of DATA is a refusal, not a lost answer: the next
// attempt sends again, and the message arrives once.
func TestTemporaryRefusalAfterDataIsSentAgain(t *testing.T) {
	s := newStandin(t)
	in := build(t, s, "email", "")
	tries := 0
	s.onData = func(int, delivery) error {
		if tries++; tries == 1 {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"}
		}
		return nil
	}
	res, err := in.call(t, "t1", "send", `{"to":["bob@example.com"],"subject":"x","text":"y"}`, "op-1")
	if out := must[email.Sent](t, res, err); out.Delivery != "accepted" || len(s.delivered()) != 1 || tries != 2 {
		t.Fatalf("%+v, %d delivered in %d tries", out, len(s.delivered()), tries)
	}
}

// A reply carries the answered message's Message-ID in In-Reply-To and
// at the end of References.
func TestReplyIsThreaded(t *testing.T) {
	s := newStandin(t)
	s.seed(t, "INBOX", "From: bob@example.com\nTo: ann@example.com\nSubject: Question\nMessage-ID: <q2@example.com>\nReferences: <q0@example.com>\n  <q1@example.com>\n\nWell?\n", day)
	in := build(t, s, "email", "")
	res, err := in.call(t, "t1", "search", `{}`, "")
	orig := must[saas.List[model.Message]](t, res, err).Items[0]
	args := fmt.Sprintf(`{"to":["bob@example.com"],"subject":"Re: Question","text":"Yes.","in_reply_to":%q}`, orig.Ref)
	res, err = in.call(t, "t1", "send", args, "op-reply")
	if out := must[email.Sent](t, res, err); out.ThreadRef != orig.Ref {
		t.Errorf("thread_ref %q; want %q", out.ThreadRef, orig.Ref)
	}
	m, err := mail.ReadMessage(bytes.NewReader(s.delivered()[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Get("In-Reply-To"); got != "<q2@example.com>" {
		t.Errorf("In-Reply-To %q", got)
	}
	if got := strings.Join(strings.Fields(m.Header.Get("References")), " "); got != "<q0@example.com> <q1@example.com> <q2@example.com>" {
		t.Errorf("References %q", got)
	}
	res, err = in.call(t, "t1", "draft", args, "op-reply-draft")
	if d := must[model.Message](t, res, err); d.ThreadRef != orig.Ref || s.count(t, "Drafts") != 1 {
		t.Errorf("draft %+v", d)
	}
	// A ref of another tenant answers nothing.
	_, err = in.call(t, "t2", "send", args, "op-reply-t2")
	wantCode(t, err, legate.CodeNotFound)
	if len(s.delivered()) != 1 {
		t.Fatalf("%d deliveries", len(s.delivered()))
	}
}

// With sent_folder set, a send whose answer was lost is confirmed by its
// copy there, as Gmail files one; without the copy it stays unconfirmed.
func TestLostReplyIsConfirmedByTheSentFolder(t *testing.T) {
	for name, copies := range map[string]bool{"copy filed": true, "no copy": false} {
		t.Run(name, func(t *testing.T) {
			s := newStandin(t)
			if err := s.user.Create("Sent", nil); err != nil {
				t.Fatal(err)
			}
			s.onData = func(n int, d delivery) error {
				if copies {
					s.seed(t, "Sent", string(d.Data), day)
				}
				if n == 1 {
					return errDrop
				}
				return nil
			}
			in := build(t, s, "email", "sent_folder: Sent")
			res, err := in.call(t, "t1", "send", sendArgs, "op-lost")
			out := must[email.Sent](t, res, err)
			want := map[bool]string{true: "accepted", false: "unconfirmed"}[copies]
			if out.Delivery != want || len(s.delivered()) != 1 {
				t.Fatalf("delivery %q (%v), %d delivered; want %s, 1", out.Delivery, out.ProviderMetadata, len(s.delivered()), want)
			}
			if copies && out.ProviderMetadata["confirmed_by"] != "found in Sent" {
				t.Errorf("metadata %v", out.ProviderMetadata)
			}
		})
	}
}
