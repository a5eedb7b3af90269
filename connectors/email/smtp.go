package email

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/oauth"
	"github.com/legate-mcp/legate/connectors/saas"
)

// smtpAuthTypes are the smtp_auth values, with the go-mail type over TLS
// and over a connection smtp_security leaves plain.
var smtpAuthTypes = map[string][2]gomail.SMTPAuthType{
	"plain":         {gomail.SMTPAuthPlain, gomail.SMTPAuthPlainNoEnc},
	"login":         {gomail.SMTPAuthLogin, gomail.SMTPAuthLoginNoEnc},
	"cram-md5":      {gomail.SMTPAuthCramMD5, gomail.SMTPAuthCramMD5},
	"scram-sha-256": {gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthSCRAMSHA256},
	"auto":          {gomail.SMTPAuthAutoDiscover, gomail.SMTPAuthAutoDiscover},
}

// smtpClient is a go-mail client for one attempt: the configured TLS
// policy, the given AUTH (password "" for none), dialing through the
// instance's guarded dialer.
func (c *Connector) smtpClient(call *connectors.Call, password string) (*gomail.Client, error) {
	opts := []gomail.Option{
		gomail.WithPort(c.cfg.SMTPPort), gomail.WithTimeout(time.Duration(c.cfg.Timeout)),
		gomail.WithTLSConfig(tlsConfig(c.cfg.SMTPHost)), gomail.WithDialContextFunc(c.dialSMTP),
	}
	switch c.cfg.SMTPSecurity {
	case "tls":
		opts = append(opts, gomail.WithSSL())
	case "starttls":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case "opportunistic":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	username := c.who.username(call, c.cfg.SMTPUsername)
	switch {
	case password != "" && c.cfg.Auth != "password":
		sc := oauth.Client(c.cfg.Auth, username, password, c.cfg.SMTPHost, c.cfg.SMTPPort)
		opts = append(opts, gomail.WithSMTPAuthCustom(oauth.SMTPAuth(sc)), gomail.WithUsername(username))
	case password != "":
		auth := smtpAuthTypes[c.cfg.SMTPAuth][0]
		if c.cfg.SMTPSecurity == "insecure" {
			auth = smtpAuthTypes[c.cfg.SMTPAuth][1]
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(username), gomail.WithPassword(password))
	}
	client, err := gomail.NewClient(c.cfg.SMTPHost, opts...)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: smtp: %v", err)
	}
	return client, nil
}

// dialSMTP connects to the SMTP server; with smtp_security tls it makes
// the TLS handshake itself, as go-mail does not when it is given a dialer.
func (c *Connector) dialSMTP(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := c.dialer.DialContext(ctx, network, addr)
	if err != nil || c.cfg.SMTPSecurity != "tls" {
		return conn, err
	}
	tc := tls.Client(conn, tlsConfig(c.cfg.SMTPHost))
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, tlsError("smtp", err)
	}
	return tc, nil
}

// sendOnce is one attempt of send: unless an earlier attempt may have
// delivered (then the message is reported unconfirmed, not sent again), it
// runs the SMTP transaction, marking the commit in the outbox just before
// the final "." and a rejection when the server refuses the message after
// it.
func (c *Connector) sendOnce(ctx context.Context, call *connectors.Call, in *composeIn, password, marker string) (*Sent, error) {
	id := c.messageID(call, marker)
	box := c.outbox(call)
	pending, next, err := box.state(ctx)
	if err != nil {
		return nil, err
	}
	if pending {
		return c.confirm(ctx, call, in, id), nil
	}
	var r *reply
	if in.InReplyTo != "" {
		err := c.imap.withIMAP(ctx, call, func(ctx context.Context, s *session) error {
			var err error
			r, err = c.reply(ctx, call, s, in.InReplyTo)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	msg, err := c.compose(call, in, id, r)
	if err != nil {
		return nil, err
	}
	from, err1 := msg.GetSender(false)
	rcpts, err2 := msg.GetRecipients()
	if err := errors.Join(err1, err2); err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "email: %v", err)
	}
	client, err := c.smtpClient(call, password)
	if err != nil {
		return nil, err
	}
	sc, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return nil, c.mapSMTP(ctx, "login", err)
	}
	defer sc.Close()
	stop := context.AfterFunc(ctx, func() { sc.Close() })
	defer stop()
	if err := sc.Mail(from); err != nil {
		return nil, c.mapSMTP(ctx, "MAIL FROM", err)
	}
	for _, r := range rcpts {
		if err := sc.Rcpt(r); err != nil {
			return nil, c.mapSMTP(ctx, "RCPT TO "+r, err)
		}
	}
	w, err := sc.Data()
	if err != nil {
		return nil, c.mapSMTP(ctx, "DATA", err)
	}
	if _, err := msg.WriteTo(w); err != nil {
		return nil, c.mapSMTP(ctx, "writing the message", err) // no final ".": nothing is delivered
	}
	// The point of no return: once the final "." leaves, the server may
	// deliver whether or not its answer comes back.
	if err := box.mark(ctx, commitKey(next), id); err != nil {
		return nil, err // the connection closes without the final ".": nothing is delivered
	}
	if err := w.Close(); err != nil {
		var te *textproto.Error
		if errors.As(err, &te) {
			// The server refused the message: it is not delivered, and a
			// retry may send it.
			if merr := box.mark(ctx, rejectKey(next), id); merr != nil {
				return nil, merr
			}
			return nil, c.mapSMTP(ctx, "end of DATA", err)
		}
		// The answer is lost: the next attempt finds the commit and
		// reports the message unconfirmed instead of sending it again.
		return nil, &legate.Error{Code: legate.CodeTransient, Message: "email: the SMTP server's answer to the message was lost", Err: err}
	}
	sc.Quit()
	return c.sent(call, in, id, "accepted"), nil
}

// mapSMTP makes an SMTP failure at stage canonical: a server's reply by
// its code, a refused login AUTH_EXPIRED, anything else as a network
// failure, or a configuration problem (no STARTTLS, no such AUTH).
func (c *Connector) mapSMTP(ctx context.Context, stage string, err error) error {
	var le *legate.Error
	if errors.As(err, &le) {
		return le
	}
	var te *textproto.Error
	if stage == "login" && oauth.Refused(err) {
		return c.cfg.authError("SMTP", c.cfg.SMTPUsername, credSMTP, err)
	}
	if !errors.As(err, &te) {
		var ne net.Error
		if stage == "login" && !errors.As(err, &ne) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && ctx.Err() == nil {
			return &legate.Error{Code: legate.CodeInvalidArgument, Err: err,
				Message: fmt.Sprintf("email: smtp: %v; check smtp_security and smtp_auth", err)}
		}
		return saas.Classify(ctx, err, "email")
	}
	msg := fmt.Sprintf("email: smtp %s: the server answered %d %s", stage, te.Code, te.Msg)
	e := &legate.Error{Code: legate.CodeInvalidArgument, Message: msg, Err: err}
	switch {
	case stage == "login" && (te.Code == 535 || te.Code == 534 || te.Code == 530 || te.Code == 538):
		return c.cfg.authError("SMTP", c.cfg.SMTPUsername, credSMTP, te.Code)
	case te.Code == 530:
		return c.cfg.authError("SMTP", c.cfg.SMTPUsername, credSMTP, te.Code)
	case te.Code >= 400 && te.Code < 500:
		e.Code = legate.CodeTransient
	case te.Code == 554 || strings.Contains(te.Msg, "5.7."):
		e.Code = legate.CodePermissionDenied
	}
	return e
}

// outbox is the proof, beside a send's operation record, of whether an
// attempt of it passed the point of no return: commit mark i is written
// before the final "." of attempt i's DATA, rejection mark i after the
// server refused that message. A commit without its rejection means the
// server may have the message, so it must not be sent again.
type outbox struct {
	ops connectors.Operations
	key string
}

// maxCommits bounds the attempts of one send that reach DATA's end.
const maxCommits = 50

func (c *Connector) outbox(call *connectors.Call) outbox {
	ops := call.Operations
	if ops == nil {
		ops = c.marks
	}
	return outbox{ops: ops, key: call.OperationID}
}

func commitKey(i int) string { return "smtp-commit/" + strconv.Itoa(i) }
func rejectKey(i int) string { return "smtp-reject/" + strconv.Itoa(i) }

// state says whether an attempt may have delivered, and which commit
// index the next attempt takes.
func (o outbox) state(ctx context.Context) (pending bool, next int, err error) {
	for i := range maxCommits {
		committed, err := o.has(ctx, commitKey(i))
		if err != nil || !committed {
			return false, i, err
		}
		rejected, err := o.has(ctx, rejectKey(i))
		if err != nil || !rejected {
			return true, i, err
		}
	}
	return false, 0, legate.Errorf(legate.CodeConflict, "email: this send was refused %d times after its end of DATA; send it with a new idempotency key", maxCommits)
}

func (o outbox) has(ctx context.Context, mark string) (bool, error) {
	key := o.key + "/" + mark
	op, err := o.ops.Begin(ctx, key, time.Minute)
	if err != nil {
		return false, recordError(err)
	}
	if op.State == connectors.OpDone {
		return true, nil
	}
	if op.State != connectors.OpBusy {
		o.ops.Abandon(ctx, key)
	}
	return false, nil
}

func (o outbox) mark(ctx context.Context, mark, id string) error {
	key := o.key + "/" + mark
	op, err := o.ops.Begin(ctx, key, time.Minute)
	if err == nil && op.State != connectors.OpDone {
		b, _ := json.Marshal(map[string]any{"message_id": "<" + id + ">", "at": time.Now().UTC()})
		err = o.ops.Finish(ctx, key, b)
	}
	if err != nil {
		return recordError(err)
	}
	return nil
}

func recordError(err error) error {
	return &legate.Error{Code: legate.CodeTransient, Message: "email: the send's operation record cannot be read or written", Err: err}
}

// testSMTP is the SMTP half of Test: it greets the server without
// logging in and reports what it offers, then logs in.
func (c *Connector) testSMTP(ctx context.Context, call *connectors.Call) error {
	err := c.smtpKit.Read(ctx, call, func(ctx context.Context, password string) error {
		probe, err := c.smtpClient(call, "")
		if err != nil {
			return err
		}
		sc, err := probe.DialToSMTPClientWithContext(ctx)
		if err != nil {
			return c.mapSMTP(ctx, "EHLO", err)
		}
		defer sc.Close()
		connectors.Reportf(ctx, "smtp: EHLO to %s:%d: ok", c.cfg.SMTPHost, c.cfg.SMTPPort)
		state, tlsErr := sc.GetTLSConnectionState()
		hasStartTLS, _ := sc.Extension("STARTTLS")
		switch {
		case c.cfg.SMTPSecurity == "tls":
			connectors.Reportf(ctx, "smtp: implicit TLS: ok (%s)", tls.VersionName(state.Version))
		case tlsErr == nil && state.HandshakeComplete:
			connectors.Reportf(ctx, "smtp: STARTTLS: offered and in use (%s)", tls.VersionName(state.Version))
		case hasStartTLS:
			connectors.Reportf(ctx, "smtp: STARTTLS: offered, not used (smtp_security %s)", c.cfg.SMTPSecurity)
		default:
			connectors.Reportf(ctx, "smtp: STARTTLS: not offered; the password would cross the network in the clear")
		}
		hasAuth, mechs := sc.Extension("AUTH")
		if !hasAuth {
			connectors.Reportf(ctx, "smtp: AUTH: not offered")
			return legate.Errorf(legate.CodeInvalidArgument, "email: the SMTP server offers no AUTH on this connection; check smtp_security")
		}
		connectors.Reportf(ctx, "smtp: AUTH mechanisms: %s", mechs)
		sc.Quit()
		client, err := c.smtpClient(call, password)
		if err != nil {
			return err
		}
		ac, err := client.DialToSMTPClientWithContext(ctx)
		if err != nil {
			return c.mapSMTP(ctx, "login", err)
		}
		defer ac.Close()
		mech := c.cfg.SMTPAuth
		if c.cfg.Auth != "password" {
			mech = strings.ToUpper(c.cfg.Auth)
		}
		connectors.Reportf(ctx, "smtp: AUTH %s as %s: ok", mech, c.who.username(call, c.cfg.SMTPUsername))
		ac.Quit()
		return nil
	})
	if err != nil {
		connectors.Reportf(ctx, "smtp: %v", err)
	}
	return err
}
