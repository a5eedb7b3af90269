package email_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	_ "github.com/legate-mcp/legate/connectors/email"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
)

// The passwords are canaries: no result, error, report line or log may
// hold them.
const (
	user         = "ann@example.com"
	imapPassword = "imap-canary-5e1f0c9b77"
	smtpPassword = "smtp-canary-a93d2b4410"
)

// standin is an IMAP server (go-imap's imapserver over imapmemserver) and
// an SMTP server (go-smtp) in process, on 127.0.0.1.
type standin struct {
	imapAddr, smtpAddr string
	mem                *imapmemserver.Server
	user               *imapmemserver.User

	mu         sync.Mutex
	deliveries []delivery
	// onData, when set, decides what happens to the n-th message (from 1)
	// the SMTP server received: nil accepts it; errDrop records it and
	// drops the connection before the reply; another error refuses it.
	onData func(n int, d delivery) error
	// onRcpt, when set, may refuse a recipient.
	onRcpt func(to string) error
	// writes counts the IMAP commands that changed a message: store,
	// move, expunge.
	writes map[string]int
	// lose, when set, says whether the answer to a command that changed a
	// message is lost: the change is made, then the connection dropped.
	lose func(op string) bool
	// oauth, when set, is the OAuth stand-in whose access tokens the IMAP
	// and SMTP servers take (XOAUTH2, OAUTHBEARER) for the accounts in
	// accounts: its user -> the mailbox's user.
	oauth *oauthtest.Provider
}

// imapSession is the IMAP stand-in's session: imapmemserver's, counting
// and possibly losing the answers of the commands that change messages,
// and taking OAuth 2.0 access tokens.
type imapSession struct {
	imapserver.SessionIMAP4rev2
	s    *standin
	conn *imapserver.Conn
	// username and token signed the session in over OAuth.
	username, token string
}

// wrote counts a change op and reports whether its answer is to be lost;
// it then drops the connection.
func (is *imapSession) wrote(op string, n int) {
	if n == 0 {
		return
	}
	is.s.mu.Lock()
	if is.s.writes == nil {
		is.s.writes = map[string]int{}
	}
	is.s.writes[op]++
	lose := is.s.lose != nil && is.s.lose(op)
	is.s.mu.Unlock()
	if lose {
		is.conn.NetConn().Close()
	}
}

func (s *standin) writeCount(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes[op]
}

func (is *imapSession) Store(w *imapserver.FetchWriter, set imap.NumSet, flags *imap.StoreFlags, opts *imap.StoreOptions) error {
	err := is.SessionIMAP4rev2.Store(w, set, flags, opts)
	if err == nil {
		is.wrote("store", 1)
	}
	return err
}

func (is *imapSession) Move(w *imapserver.MoveWriter, set imap.NumSet, dest string) error {
	count := func() uint32 {
		st, err := is.s.user.Status(dest, &imap.StatusOptions{NumMessages: true})
		if err != nil {
			return 0
		}
		return *st.NumMessages
	}
	before := count()
	err := is.SessionIMAP4rev2.Move(w, set, dest)
	if err == nil {
		is.wrote("move", int(count()-before))
	}
	return err
}

func (is *imapSession) Append(mailbox string, r imap.LiteralReader, opts *imap.AppendOptions) (*imap.AppendData, error) {
	data, err := is.SessionIMAP4rev2.Append(mailbox, r, opts)
	if err == nil {
		is.wrote("append", 1)
	}
	return data, err
}

func (is *imapSession) Expunge(w *imapserver.ExpungeWriter, uids *imap.UIDSet) error {
	err := is.SessionIMAP4rev2.Expunge(w, uids)
	if err == nil {
		is.wrote("expunge", 1)
	}
	return err
}

// specialUse is what the stand-in's folders are for (imapmemserver
// keeps none).
var specialUse = map[string]imap.MailboxAttr{"Drafts": imap.MailboxAttrDrafts, "Archive": imap.MailboxAttrArchive, "Trash": imap.MailboxAttrTrash, "Sent": imap.MailboxAttrSent}

// List answers LIST "" "*" itself, with the folders' special use and,
// asked, their status.
func (is *imapSession) List(w *imapserver.ListWriter, ref string, patterns []string, opts *imap.ListOptions) error {
	if ref != "" || len(patterns) != 1 || patterns[0] != "*" || opts == nil {
		return is.SessionIMAP4rev2.List(w, ref, patterns, opts)
	}
	for _, name := range []string{"Archive", "Drafts", "INBOX", "Sent", "Trash"} {
		st, err := is.s.user.Status(name, &imap.StatusOptions{NumMessages: true, NumUnseen: true})
		if err != nil {
			continue // no such folder
		}
		d := &imap.ListData{Mailbox: name, Delim: '/'}
		if use := specialUse[name]; use != "" && opts.ReturnSpecialUse {
			d.Attrs = append(d.Attrs, use)
		}
		if opts.ReturnStatus != nil {
			d.Status = st
		}
		if err := w.WriteList(d); err != nil {
			return err
		}
	}
	return nil
}

func (is *imapSession) AuthenticateMechanisms() []string {
	if is.s.oauth == nil {
		return []string{sasl.Plain}
	}
	return []string{sasl.Plain, "XOAUTH2", sasl.OAuthBearer}
}

func (is *imapSession) Authenticate(mech string) (sasl.Server, error) {
	login := func(username, token string) error {
		if is.s.oauth == nil || !is.s.bearer(username, token) {
			return &imap.Error{Type: imap.StatusResponseTypeNo, Code: imap.ResponseCodeAuthenticationFailed, Text: "invalid credentials"}
		}
		is.username, is.token = username, token
		return is.SessionIMAP4rev2.Login(user, imapPassword)
	}
	switch mech {
	case "XOAUTH2":
		return xoauth2Server(login), nil
	case sasl.OAuthBearer:
		return sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if login(o.Username, o.Token) != nil {
				return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
			}
			return nil
		}), nil
	}
	return sasl.NewPlainServer(func(_, username, password string) error { return is.SessionIMAP4rev2.Login(username, password) }), nil
}

// errDrop makes the SMTP stand-in keep a message and hang up instead of
// answering 250.
var errDrop = errors.New("drop")

type delivery struct {
	From      string
	To        []string
	MessageID string
	Data      []byte
}

func newStandin(t testing.TB) *standin {
	t.Helper()
	return newStandinWith(t, imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}}, nil)
}

// newStandinWith is a stand-in whose IMAP server announces caps, its
// sessions wrapped by wrap when set.
func newStandinWith(t testing.TB, caps imap.CapSet, wrap func(imapserver.Session) imapserver.Session) *standin {
	t.Helper()
	s := &standin{}
	mem := imapmemserver.New()
	s.mem = mem
	s.user = imapmemserver.NewUser(user, imapPassword)
	mem.AddUser(s.user)
	for _, f := range []string{"INBOX", "Drafts", "Archive", "Trash"} {
		if err := s.user.Create(f, nil); err != nil {
			t.Fatal(err)
		}
	}
	quiet := log.New(io.Discard, "", 0)
	isrv := imapserver.New(&imapserver.Options{
		NewSession: func(conn *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			sess := &imapSession{SessionIMAP4rev2: mem.NewSession().(imapserver.SessionIMAP4rev2), s: s, conn: conn}
			if wrap != nil {
				return wrap(sess), nil, nil
			}
			return sess, nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       quiet,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go isrv.Serve(ln)
	// Closing the listener too ends a Serve that starts after Close.
	t.Cleanup(func() { isrv.Close(); ln.Close() })
	s.imapAddr = ln.Addr().String()

	ssrv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &smtpSession{s: s, conn: c}, nil }))
	ssrv.Domain = "localhost"
	ssrv.AllowInsecureAuth = true
	ssrv.ErrorLog = quiet
	sln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ssrv.Serve(sln)
	t.Cleanup(func() { ssrv.Close(); sln.Close() })
	s.smtpAddr = sln.Addr().String()
	return s
}

// seed appends a message to folder, received at when.
func (s *standin) seed(t testing.TB, folder string, raw string, when time.Time, flags ...imap.Flag) {
	t.Helper()
	raw = strings.ReplaceAll(strings.ReplaceAll(raw, "\r\n", "\n"), "\n", "\r\n")
	if _, err := s.user.Append(folder, bytes.NewReader([]byte(raw)), &imap.AppendOptions{Time: when, Flags: flags}); err != nil {
		t.Fatal(err)
	}
}

// plain is a text/plain message.
func plain(from, subject, body string, n int) string {
	return fmt.Sprintf("From: %s\nTo: Ann <ann@example.com>\nCc: ops@example.com\nSubject: %s\nDate: Mon, 02 Mar 2026 10:%02d:00 +0000\nMessage-ID: <m%d@example.com>\nContent-Type: text/plain; charset=utf-8\n\n%s\n",
		from, subject, n%60, n, body)
}

// count is the number of messages in folder.
func (s *standin) count(t testing.TB, folder string) uint32 {
	t.Helper()
	st, err := s.user.Status(folder, &imap.StatusOptions{NumMessages: true})
	if err != nil {
		t.Fatal(err)
	}
	return *st.NumMessages
}

func (s *standin) delivered() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.deliveries...)
}

type smtpSession struct {
	s      *standin
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

func (ss *smtpSession) AuthMechanisms() []string {
	if ss.s.oauth != nil {
		return []string{sasl.Plain, "XOAUTH2", sasl.OAuthBearer}
	}
	return []string{sasl.Plain}
}

func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	login := func(username, token string) error {
		if ss.s.oauth == nil || !ss.s.bearer(username, token) {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}
	switch mech {
	case "XOAUTH2":
		return xoauth2Server(login), nil
	case sasl.OAuthBearer:
		return sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if login(o.Username, o.Token) != nil {
				return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
			}
			return nil
		}), nil
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		if username != user || password != smtpPassword {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.s.onRcpt != nil {
		if err := ss.s.onRcpt(to); err != nil {
			return err
		}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	d := delivery{From: ss.from, To: ss.to, Data: b}
	if m, err := mail.ReadMessage(bytes.NewReader(b)); err == nil {
		d.MessageID = m.Header.Get("Message-ID")
	}
	s := ss.s
	s.mu.Lock()
	n := len(s.deliveries) + 1
	var verdict error
	if s.onData != nil {
		verdict = s.onData(n, d)
	}
	if verdict == nil || verdict == errDrop {
		s.deliveries = append(s.deliveries, d)
	}
	s.mu.Unlock()
	if verdict == errDrop {
		ss.conn.Conn().Close() // kept, but the 250 never leaves
		return nil
	}
	return verdict
}

func (ss *smtpSession) Reset()        { ss.from, ss.to = "", nil }
func (ss *smtpSession) Logout() error { return nil }

// instance is a built email connector on a stand-in, with the key and
// operation record the gateway would give its calls.
type instance struct {
	c     connectors.Connector
	key   []byte
	ops   connectors.Operations
	creds connectortest.Creds
}

func config(s *standin, extra string) string {
	ih, ip, _ := net.SplitHostPort(s.imapAddr)
	sh, sp, _ := net.SplitHostPort(s.smtpAddr)
	return fmt.Sprintf(`imap_host: %s
imap_port: %s
imap_security: insecure
imap_username: %s
smtp_host: %s
smtp_port: %s
smtp_security: insecure
smtp_username: %s
from: "Ann <ann@example.com>"
allow_private_networks: true
retry_backoff: 1ms
%s`, ih, ip, user, sh, sp, user, extra)
}

func build(t testing.TB, s *standin, id, extra string) *instance {
	t.Helper()
	c := connectortest.Build(t, "email", id, config(s, extra))
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	return &instance{c: c, key: []byte("key of " + id), ops: saas.NewMemoryOperations(),
		creds: connectortest.Creds{"imap_password": imapPassword, "smtp_password": smtpPassword}}
}

func (in *instance) tool(t testing.TB, name string) connectors.Tool {
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
func (in *instance) call(t testing.TB, tenant, tool, args, op string) (*legate.Result, error) {
	t.Helper()
	return in.tool(t, tool).Run(context.Background(), &connectors.Call{
		Tool: tool, Args: json.RawMessage(args), Caller: connectors.Caller{Principal: "p", Tenant: tenant},
		Credentials: in.creds, OperationID: op, Key: func() []byte { return in.key }, Operations: in.ops,
	})
}

func decode[T any](t testing.TB, res *legate.Result) T {
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

func must[T any](t testing.TB, res *legate.Result, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return decode[T](t, res)
}

func wantCode(t testing.TB, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

// noSecret fails if either password shows in any of texts.
func noSecret(t testing.TB, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, p := range []string{imapPassword, smtpPassword, "5e1f0c9b77", "a93d2b4410"} {
			if strings.Contains(s, p) {
				t.Fatalf("a password shows in %q", s)
			}
		}
	}
}

// texts is everything a client or a log could see of a result and error.
func texts(res *legate.Result, err error) []string {
	var out []string
	if res != nil {
		b, _ := json.Marshal(res.Structured)
		out = append(out, string(b), res.Text)
	}
	if err != nil {
		out = append(out, err.Error(), fmt.Sprintf("%+v", err))
		var le *legate.Error
		if errors.As(err, &le) {
			b, _ := json.Marshal(le.Details)
			out = append(out, string(b), le.Message)
			if le.Err != nil {
				out = append(out, le.Err.Error())
			}
		}
	}
	return out
}

// noAppendUID is a session of a server without UIDPLUS: APPEND does not
// say which UID the message got.
type noAppendUID struct{ imapserver.Session }

func (s noAppendUID) Append(mailbox string, r imap.LiteralReader, options *imap.AppendOptions) (*imap.AppendData, error) {
	_, err := s.Session.Append(mailbox, r, options)
	return nil, err
}
