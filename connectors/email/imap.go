package email

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/mailbox"
	"github.com/legate-mcp/legate/connectors/email/mimetext"
	"github.com/legate-mcp/legate/connectors/email/oauth"
	"github.com/legate-mcp/legate/connectors/saas"
)

// idleFor is how long an unused IMAP connection is kept; servers drop idle
// clients after 30 minutes at the earliest (RFC 9051), most much later.
const idleFor = 5 * time.Minute

// session is one logged-in IMAP connection.
type session struct {
	c    *imapclient.Client
	cred [32]byte // digest of the password it logged in with
	used time.Time
}

// pool keeps an instance's idle IMAP connections, at most max open at once,
// so that a call does not pay a dial, a TLS handshake and a login. A
// connection logged in with another password (a rotated secret) is not
// reused.
type pool struct {
	slots chan struct{}
	mu    sync.Mutex
	idle  []*session
}

func newPool(max int) *pool { return &pool{slots: make(chan struct{}, max)} }

func (p *pool) acquire(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pool) release() { <-p.slots }

// take returns an idle session logged in with cred, or nil; it closes the
// stale ones it passes.
func (p *pool) take(cred [32]byte) *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		s := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if s.cred == cred && time.Since(s.used) < idleFor && !closed(s.c) {
			return s
		}
		go s.c.Close()
	}
	return nil
}

func (p *pool) put(s *session) {
	s.used = time.Now()
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
}

func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, s := range idle {
		// LOGOUT is polite but may wait on a server that no longer answers;
		// closing is enough.
		s.c.Close()
	}
}

func closed(c *imapclient.Client) bool {
	select {
	case <-c.Closed():
		return true
	default:
		return false
	}
}

// imapAccess is an instance's way to its IMAP server: the kit of the IMAP
// credential, the logins, the guarded dialer and the pool of connections.
type imapAccess struct {
	cfg    *Config
	kit    *saas.Kit
	who    who
	dialer *net.Dialer
	pool   *pool
}

// withIMAP runs fn on a logged-in IMAP session of call's credential,
// within the kit's retries; fn returns a canonical error or a go-imap one.
func (c *imapAccess) withIMAP(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, s *session) error) error {
	return c.kit.Read(ctx, call, func(ctx context.Context, password string) error {
		return c.session(ctx, call, password, fn)
	})
}

// withClient is withIMAP for the tools of package mailbox.
func (c *imapAccess) withClient(ctx context.Context, call *connectors.Call, fn mailbox.Fn) error {
	return c.withIMAP(ctx, call, func(ctx context.Context, s *session) error { return fn(ctx, s.c) })
}

// login runs fn once, for an attempt of a write of package mailbox: on a
// pooled connection the server closed meanwhile it fails, not run again at
// once as session would, since the command may have been performed; the
// write's next attempt looks for it first.
func (c *imapAccess) login(ctx context.Context, call *connectors.Call, token string, fn mailbox.Fn) error {
	if err := c.pool.acquire(ctx); err != nil {
		return err
	}
	defer c.pool.release()
	username := c.who.username(call, c.cfg.IMAPUsername)
	cred := sha256.Sum256([]byte(username + "\x00" + token))
	s := c.pool.take(cred)
	if s == nil {
		var err error
		if s, err = c.dialIMAP(ctx, username, token); err != nil {
			return err
		}
		s.cred = cred
	}
	return c.run(ctx, s, func(ctx context.Context, s *session) error { return fn(ctx, s.c) })
}

// session runs fn on a pooled session, or a new one. A pooled connection
// the server closed meanwhile fails fn with a network error: fn is then run
// once more on a new connection at once (the tools' IMAP steps are safe to
// repeat: draft looks for its Message-ID before appending).
func (c *imapAccess) session(ctx context.Context, call *connectors.Call, password string, fn func(ctx context.Context, s *session) error) error {
	if err := c.pool.acquire(ctx); err != nil {
		return err
	}
	defer c.pool.release()
	username := c.who.username(call, c.cfg.IMAPUsername)
	cred := sha256.Sum256([]byte(username + "\x00" + password))
	if s := c.pool.take(cred); s != nil {
		err := c.run(ctx, s, fn)
		if err == nil || !connectionLost(err) || ctx.Err() != nil {
			return err
		}
	}
	s, err := c.dialIMAP(ctx, username, password)
	if err != nil {
		return err
	}
	s.cred = cred
	return c.run(ctx, s, fn)
}

// run runs fn on s and puts s back in the pool unless its connection
// broke; the end of ctx closes the connection, which go-imap cannot cancel.
func (c *imapAccess) run(ctx context.Context, s *session, fn func(ctx context.Context, s *session) error) error {
	stop := context.AfterFunc(ctx, func() { s.c.Close() })
	err := fn(ctx, s)
	if !stop() || connectionLost(err) || closed(s.c) {
		s.c.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if c.pool != nil {
		c.pool.put(s)
	}
	return err
}

// connectionLost reports whether err is a failure of the connection
// rather than a server's answer.
func connectionLost(err error) bool {
	if err == nil {
		return false
	}
	var ie *imap.Error
	var le *legate.Error
	if errors.As(err, &ie) || (errors.As(err, &le) && le.Code != legate.CodeTransient && le.Code != legate.CodeTimeout) {
		return false
	}
	return true
}

// dialIMAP connects to the IMAP server as the config says and logs in.
func (c *imapAccess) dialIMAP(ctx context.Context, username, password string) (*session, error) {
	addr := net.JoinHostPort(c.cfg.IMAPHost, strconv.Itoa(c.cfg.IMAPPort))
	conn, err := c.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	opts := &imapclient.Options{WordDecoder: mimetext.WordDecoder, TLSConfig: tlsConfig(c.cfg.IMAPHost)}
	var client *imapclient.Client
	switch c.cfg.IMAPSecurity {
	case "tls":
		tc := tls.Client(conn, opts.TLSConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, tlsError("imap", err)
		}
		client = imapclient.New(tc, opts)
	case "starttls":
		client, err = imapclient.NewStartTLS(conn, opts)
		if err != nil {
			return nil, tlsError("imap", err)
		}
	default:
		client = imapclient.New(conn, opts)
	}
	if err := client.WaitGreeting(); err != nil {
		client.Close()
		return nil, err
	}
	if c.cfg.Auth == "password" {
		err = client.Login(username, password).Wait()
	} else {
		err = client.Authenticate(oauth.Client(c.cfg.Auth, username, password, c.cfg.IMAPHost, c.cfg.IMAPPort))
	}
	if err != nil {
		client.Close()
		var ie *imap.Error
		if errors.As(err, &ie) && ie.Code != imap.ResponseCodeUnavailable {
			return nil, c.cfg.authError("IMAP", username, credIMAP, ie.Code)
		}
		if oauth.Refused(err) {
			return nil, c.cfg.authError("IMAP", username, credIMAP, err)
		}
		return nil, err
	}
	return &session{c: client}, nil
}

func tlsConfig(host string) *tls.Config {
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}

// authError is the AUTH_EXPIRED error of a refused login: it names the
// user and the credential to renew, never the credential's value.
func (cfg *Config) authError(proto, user, cred string, code any) *legate.Error {
	if cfg.Auth != "password" {
		return legate.Errorf(legate.CodeAuthExpired, "email: the %s server refused the OAuth access token of %s (%v); reconnect the account: connect again for a per-user connection, or renew the oauth credentials", proto, user, code)
	}
	return legate.Errorf(legate.CodeAuthExpired, "email: the %s server refused the login of %s (%v); check the %s credential (an app password where the provider asks for one)", proto, user, code, cred)
}

// tlsError is a failed TLS handshake or STARTTLS: a certificate the
// machine does not trust, a server that speaks no TLS on that port or
// offers no STARTTLS is a configuration problem, not worth retrying; a
// network failure stays one.
func tlsError(proto string, err error) error {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	return &legate.Error{Code: legate.CodeInvalidArgument, Err: err,
		Message: fmt.Sprintf("email: %s TLS failed: %v; check %s_security and %s_port", proto, err, proto, proto)}
}

// mapIMAP makes an IMAP failure canonical: the server's NO and BAD by
// their response code, anything else as a network failure.
func mapIMAP(ctx context.Context, err error, what string) error {
	if err == nil {
		return nil
	}
	var le *legate.Error
	if errors.As(err, &le) {
		return le
	}
	var ie *imap.Error
	if !errors.As(err, &ie) {
		return saas.Classify(ctx, err, "email")
	}
	msg := fmt.Sprintf("email: %s: the IMAP server answered %s", what, ie.Error())
	switch ie.Code {
	case imap.ResponseCodeNonExistent, imap.ResponseCodeTryCreate:
		return &legate.Error{Code: legate.CodeNotFound, Message: msg, Err: err}
	case imap.ResponseCodeUnavailable, imap.ResponseCodeInUse, imap.ResponseCodeServerBug:
		return &legate.Error{Code: legate.CodeTransient, Message: msg, Err: err}
	case imap.ResponseCodeAuthenticationFailed, imap.ResponseCodeAuthorizationFailed, imap.ResponseCodeExpired:
		return &legate.Error{Code: legate.CodeAuthExpired, Message: msg + "; check the " + credIMAP + " credential", Err: err}
	case imap.ResponseCodeNoPerm, imap.ResponseCodeOverQuota, imap.ResponseCodePrivacyRequired:
		return &legate.Error{Code: legate.CodePermissionDenied, Message: msg, Err: err}
	}
	return &legate.Error{Code: legate.CodeInvalidArgument, Message: msg, Err: err}
}

// examine opens folder read-only.
func examine(ctx context.Context, s *session, folder string) (*imap.SelectData, error) {
	data, err := s.c.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return nil, mapIMAP(ctx, err, "folder "+strconv.Quote(folder))
	}
	return data, nil
}

// testIMAP is the IMAP half of Test.
func (c *imapAccess) test(ctx context.Context, call *connectors.Call) error {
	err := c.withIMAP(ctx, call, func(ctx context.Context, s *session) error {
		connectors.Reportf(ctx, "imap: logged in to %s:%d (%s) as %s", c.cfg.IMAPHost, c.cfg.IMAPPort, c.cfg.IMAPSecurity, c.cfg.IMAPUsername)
		list, err := s.c.List("", "*", nil).Collect()
		if err != nil {
			return mapIMAP(ctx, err, "listing folders")
		}
		names := make([]string, 0, len(list))
		drafts := false
		for _, l := range list {
			names = append(names, l.Mailbox)
			drafts = drafts || l.Mailbox == c.cfg.DraftsFolder
		}
		connectors.Reportf(ctx, "imap: %d folder(s): %s", len(names), joinQuoted(names, 20))
		if !drafts {
			connectors.Reportf(ctx, "imap: drafts folder %q: MISSING", c.cfg.DraftsFolder)
			return legate.Errorf(legate.CodeNotFound, "email: the drafts folder %q does not exist; set drafts_folder to one of the folders listed", c.cfg.DraftsFolder)
		}
		connectors.Reportf(ctx, "imap: drafts folder %q: ok", c.cfg.DraftsFolder)
		return nil
	})
	if err != nil {
		connectors.Reportf(ctx, "imap: %v", err)
	}
	return err
}

// joinQuoted lists names quoted, at most n of them.
func joinQuoted(names []string, n int) string {
	var b strings.Builder
	for i, name := range names {
		if i == n {
			fmt.Fprintf(&b, ", and %d more", len(names)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(name))
	}
	return b.String()
}
