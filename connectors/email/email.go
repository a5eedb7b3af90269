// Package email is the "email" connector: it searches and reads a mailbox
// over IMAP (github.com/emersion/go-imap/v2), saves drafts to its Drafts
// folder, and sends and replies over SMTP (github.com/wneessen/go-mail),
// signing in with a password or an OAuth 2.0 token (package oauth), one
// account per instance or each caller's own. Package mailbox holds the
// folder, attachment and organizing tools; package mimetext reads texts.
//
// It is built on connectors/saas: messages are message.v1 named by signed
// refs (folder, UIDVALIDITY and UID inside), searches page by UID ranges
// behind signed cursors, and the writes happen at most once per
// idempotency key:
//
//   - draft: the draft's Message-ID derives from the key; before it
//     APPENDs, it searches the Drafts folder for that Message-ID, so a
//     retried draft is found, not appended again;
//   - send: the Message-ID derives from the key too, but SMTP cannot be
//     asked what it received. Just before the final "." of DATA — the
//     point past which the server may deliver — the connector records a
//     commit mark in the operation record; a server's refusal of the
//     message after it records a rejection. An attempt whose answer was
//     lost leaves a commit without a rejection, and every retry of the key
//     then reports the message as sent but unconfirmed instead of sending
//     it again.
package email

import (
	"context"
	"errors"
	"net"
	"net/mail"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/email/oauth"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is an email instance's configuration.
type Config struct {
	// Auth is how the instance signs in.
	Auth string `yaml:"auth" default:"password" desc:"How the instance signs in to IMAP and SMTP: password (the imap_password and smtp_password credentials; SMTP by smtp_auth), xoauth2 or oauthbearer (an OAuth 2.0 access token, SASL XOAUTH2 as Gmail and Microsoft 365 take it, or OAUTHBEARER): from oauth_refresh_token with oauth_client_id, else oauth_access_token, which a per-user connection supplies"`
	// OAuthProvider gives oauth_url its default.
	OAuthProvider string `yaml:"oauth_provider" desc:"gmail or microsoft: oauth_url defaults to its token endpoint (scopes: https://mail.google.com/; or https://outlook.office.com/IMAP.AccessAsUser.All, SMTP.Send and offline_access)"`
	// OAuthTokenURL is where a shared refresh token is exchanged.
	OAuthTokenURL string `yaml:"oauth_url" desc:"Token endpoint where the oauth_refresh_token credential is exchanged for access tokens (default: oauth_provider's)"`
	// OAuthClientID is the OAuth app a shared refresh token was issued to.
	OAuthClientID string `yaml:"oauth_client_id" desc:"Client id of the OAuth app oauth_refresh_token was issued to (its secret: the oauth_client_secret credential). Set, the instance exchanges the refresh token; empty, it uses oauth_access_token as given, or the caller's own connection with credentials_mode per_user"`
	// IMAPHost is the IMAP server.
	IMAPHost string `yaml:"imap_host" required:"true" desc:"IMAP server host name, e.g. imap.gmail.com"`
	// IMAPPort is its port.
	IMAPPort int `yaml:"imap_port" default:"993" desc:"IMAP server port: 993 for tls, 143 for starttls"`
	// IMAPSecurity is how the IMAP connection is protected.
	IMAPSecurity string `yaml:"imap_security" default:"tls" desc:"tls (implicit TLS, port 993), starttls (upgrade a plain connection, port 143; refused if the server does not offer it) or insecure (no TLS at all: for test servers only)"`
	// IMAPUsername is the IMAP login.
	IMAPUsername string `yaml:"imap_username" required:"true" desc:"IMAP login, usually the mailbox's address; {principal} stands for the caller's name (per-user connections, where each person signs in to their own mailbox)"`
	// SMTPHost is the SMTP submission server.
	SMTPHost string `yaml:"smtp_host" required:"true" desc:"SMTP submission server host name, e.g. smtp.gmail.com"`
	// SMTPPort is its port.
	SMTPPort int `yaml:"smtp_port" default:"587" desc:"SMTP submission port: 587 for starttls, 465 for tls"`
	// SMTPSecurity is how the SMTP connection is protected.
	SMTPSecurity string `yaml:"smtp_security" default:"starttls" desc:"starttls (STARTTLS required), opportunistic (STARTTLS when offered), tls (implicit TLS, port 465) or insecure (no TLS at all: for test servers only)"`
	// SMTPAuth is the SASL mechanism.
	SMTPAuth string `yaml:"smtp_auth" default:"plain" desc:"SMTP AUTH mechanism: plain, login, cram-md5, scram-sha-256 or auto (the strongest the server offers)"`
	// SMTPUsername is the SMTP login.
	SMTPUsername string `yaml:"smtp_username" required:"true" desc:"SMTP login, usually the mailbox's address; {principal} stands for the caller's name"`
	// From is the sender of drafts and sent mail.
	From string `yaml:"from" required:"true" desc:"Sender address of drafts and sent mail, optionally with a name: \"Ops Bot <ops@example.com>\"; {principal} stands for the caller's name"`
	// DraftsFolder is where draft saves.
	DraftsFolder string `yaml:"drafts_folder" default:"Drafts" desc:"Folder drafts are saved to ([Gmail]/Drafts on Gmail)"`
	// SentFolder is where the provider files submitted mail, if it does.
	SentFolder string `yaml:"sent_folder" desc:"Folder where the provider files the mail sent through its SMTP server by itself ([Gmail]/Sent Mail on Gmail); when set, a send whose SMTP answer was lost is looked for there by its Message-ID to confirm it. Leave empty for servers that do not"`
	// ArchiveFolder is where archive moves messages.
	ArchiveFolder string `yaml:"archive_folder" desc:"Folder archive moves messages to; empty for the folder the server marks \\Archive (RFC 6154). Gmail: [Gmail]/All Mail"`
	// MaxAttachmentBytes bounds the attachments fetched and sent.
	MaxAttachmentBytes int `yaml:"max_attachment_bytes" default:"10485760" desc:"Most bytes of one attachment that attachment returns, and of all the attachments of one draft, send or reply together (1024 to 26214400)"`
	// Toolsets selects the groups of tools the instance offers.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: read (default), send (default), organize\" example:\"[default, organize]\""
	// Markers names the operation in the Message-ID of what a write creates.
	Markers bool `yaml:"markers" default:"false" desc:"Give the drafts and messages a write creates a Message-ID that names Legate's operation (lg1-...@domain); off, their Message-ID is an opaque digest of the operation, which a retry still finds them by, and nothing of Legate's is in the message"`
	// MaxBodyBytes bounds the text read returns.
	MaxBodyBytes int `yaml:"max_body_bytes" default:"65536" desc:"Most bytes of a message's text that read returns (1024 to 10485760); a longer text is cut and marked text_truncated"`
	// MaxConnections bounds the instance's IMAP connections.
	MaxConnections int `yaml:"max_connections" default:"4" desc:"IMAP connections the instance keeps open at most (1 to 32); providers cap them per account (Gmail: 15)"`
	// AllowPrivateNetworks lets the hosts be loopback or private addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow imap_host and smtp_host on loopback, private or link-local addresses (a test server, an internal relay); refused by default"`
	// Timeout bounds one attempt.
	Timeout legate.Duration `yaml:"timeout" default:"30s" desc:"Time limit of one attempt (connecting, logging in and the commands of one call)"`
	// MaxAttempts bounds the attempts of one call.
	MaxAttempts int `yaml:"max_attempts" default:"3" desc:"Attempts per call, the first included (1 to 10); retried on network errors and temporary (4xx, UNAVAILABLE) refusals"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"500ms" desc:"First wait before a retry; it doubles per attempt, with jitter"`
}

// Limits of the configuration and of the tools.
const (
	MaxAttemptsLimit = 10
	// The page size of search.
	DefaultMessages, MaxMessages = 20, 100
	// MaxRecipients bounds the to, cc and bcc of one draft or send.
	MaxRecipients = 100
	// MaxTextBytes bounds the text of a draft or a sent message.
	MaxTextBytes = 1 << 20
)

// The credentials.
const (
	credIMAP         = "imap_password"
	credSMTP         = "smtp_password"
	credRefreshToken = "oauth_refresh_token"
	credClientSecret = "oauth_client_secret"
	credAccessToken  = "oauth_access_token"
)

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "email",
		Description: "Email account: search and read over IMAP, save drafts to the Drafts folder, send over SMTP",
		Credentials: []connectors.Credential{
			{Name: credIMAP, Description: "Password (or app password) of imap_username on the IMAP server, with auth password"},
			{Name: credSMTP, Description: "Password (or app password) of smtp_username on the SMTP server, with auth password"},
			{Name: credRefreshToken, Description: "OAuth 2.0 refresh token of the mailbox, issued to oauth_client_id with the mail scopes, with auth xoauth2 or oauthbearer"},
			{Name: credClientSecret, Description: "Secret of the OAuth app oauth_client_id names"},
			{Name: credAccessToken, Description: "OAuth 2.0 access token of the mailbox, used as given (without oauth_client_id); a per-user connection supplies it"},
		},
	}, New))
}

// Connector is one email instance.
type Connector struct {
	described
	cfg     Config
	from    *mail.Address
	imapKit *saas.Kit
	smtpKit *saas.Kit
	imap    *imapAccess
	dialer  *net.Dialer
	tokens  *oauth.Tokens
	who     who
	// marks keeps send's commit marks when a call carries no Operations.
	marks *saas.MemoryOperations
	// catalog is every tool of the type; tools those of the toolsets
	// chosen, selErr the error of an unknown toolset.
	catalog, tools []connectors.Tool
	selErr         error
}

// Toolsets are the type's groups of tools.
var Toolsets = []connectors.Toolset{
	{Name: "read", Description: "Search and read messages, list folders, fetch attachments", Default: true},
	{Name: "send", Description: "Save drafts, send and reply (HTML bodies and attachments too)", Default: true},
	{Name: "organize", Description: "Mark read or unread, flag, move, archive and delete messages"},
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{cfg: *cfg, marks: saas.NewMemoryOperations()}
	// A principal may stand for the local part or the whole address.
	for _, p := range []string{"principal", "principal@example.com"} {
		if c.from == nil {
			c.from, _ = mail.ParseAddress(strings.ReplaceAll(cfg.From, "{principal}", p))
		}
	}
	if cfg.OAuthTokenURL == "" {
		c.cfg.OAuthTokenURL = oauth.Providers[cfg.OAuthProvider].TokenURL
	}
	c.who = who{cfg: &c.cfg, addr: c.from}
	kit := func(cred string, exchange func(context.Context, *connectors.Call, string, string) (string, error)) *saas.Kit {
		opts := saas.Options{
			Provider: "email", Credential: cred, MaxAttempts: cfg.MaxAttempts, Markers: cfg.Markers,
			Base: time.Duration(cfg.RetryBackoff), AttemptTimeout: time.Duration(cfg.Timeout),
		}
		if exchange != nil {
			opts.Exchange, opts.Masked = exchange, []string{credClientSecret}
		}
		return saas.New(inst, opts)
	}
	c.imapKit, c.smtpKit = kit(credIMAP, nil), kit(credSMTP, nil)
	switch {
	case cfg.Auth != "password" && cfg.OAuthClientID != "":
		c.tokens = &oauth.Tokens{HTTP: netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout), MaxRedirects: -1})}
		c.imapKit = kit(credRefreshToken, c.tokens.Exchange(c.cfg.OAuthTokenURL, c.cfg.OAuthClientID, credClientSecret))
		c.smtpKit = c.imapKit
	case cfg.Auth != "password":
		c.imapKit = kit(credAccessToken, nil)
		c.smtpKit = c.imapKit
	}
	c.dialer = &net.Dialer{Timeout: min(time.Duration(cfg.Timeout), 10*time.Second), Control: c.control}
	c.imap = &imapAccess{cfg: &c.cfg, kit: c.imapKit, who: c.who, dialer: c.dialer, pool: newPool(max(cfg.MaxConnections, 1))}
	c.catalog = c.newTools()
	c.tools, c.selErr = connectors.SelectTools("email", Toolsets, cfg.Toolsets, false, c.catalog)
	return c, nil
}

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	var errs []error
	for _, h := range []struct {
		field, host string
		port        int
	}{{"imap_host", c.cfg.IMAPHost, c.cfg.IMAPPort}, {"smtp_host", c.cfg.SMTPHost, c.cfg.SMTPPort}} {
		switch {
		case h.host == "" || strings.ContainsAny(h.host, "/:@ ") && !isIPv6(h.host):
			errs = append(errs, legate.Invalid(h.field, "must be a host name or address without scheme, port or path, got %q", h.host))
		case !c.cfg.AllowPrivateNetworks:
			if err := netguard.CheckHost(h.host); err != nil {
				errs = append(errs, legate.Invalid(h.field, "%v", err))
			}
		}
		if h.port < 1 || h.port > 65535 {
			errs = append(errs, legate.Invalid(strings.Replace(h.field, "host", "port", 1), "must be between 1 and 65535, got %d", h.port))
		}
	}
	if !oneOf(c.cfg.IMAPSecurity, "tls", "starttls", "insecure") {
		errs = append(errs, legate.Invalid("imap_security", "must be tls, starttls or insecure, got %q", c.cfg.IMAPSecurity))
	}
	if !oneOf(c.cfg.SMTPSecurity, "starttls", "opportunistic", "tls", "insecure") {
		errs = append(errs, legate.Invalid("smtp_security", "must be starttls, opportunistic, tls or insecure, got %q", c.cfg.SMTPSecurity))
	}
	if _, ok := smtpAuthTypes[c.cfg.SMTPAuth]; !ok {
		errs = append(errs, legate.Invalid("smtp_auth", "must be plain, login, cram-md5, scram-sha-256 or auto, got %q", c.cfg.SMTPAuth))
	}
	if !oneOf(c.cfg.Auth, "password", oauth.XOAUTH2, oauth.OAUTHBEARER) {
		errs = append(errs, legate.Invalid("auth", "must be password, xoauth2 or oauthbearer, got %q", c.cfg.Auth))
	}
	if _, ok := oauth.Providers[c.cfg.OAuthProvider]; c.cfg.OAuthProvider != "" && !ok {
		errs = append(errs, legate.Invalid("oauth_provider", "must be gmail or microsoft, got %q", c.cfg.OAuthProvider))
	}
	if c.cfg.OAuthClientID != "" {
		if c.cfg.OAuthTokenURL == "" {
			errs = append(errs, legate.Invalid("oauth_url", "is needed with oauth_client_id: the token endpoint (or set oauth_provider)"))
		} else {
			_, uerrs := saas.CheckURL("oauth_url", c.cfg.OAuthTokenURL, c.cfg.AllowPrivateNetworks)
			errs = append(errs, uerrs...)
		}
	}
	if c.cfg.IMAPUsername == "" {
		errs = append(errs, legate.Invalid("imap_username", "must not be empty"))
	}
	if c.cfg.SMTPUsername == "" {
		errs = append(errs, legate.Invalid("smtp_username", "must not be empty"))
	}
	if c.from == nil {
		errs = append(errs, legate.Invalid("from", "must be an email address, optionally with a name, got %q", c.cfg.From))
	}
	if strings.TrimSpace(c.cfg.DraftsFolder) == "" {
		errs = append(errs, legate.Invalid("drafts_folder", "must not be empty"))
	}
	if c.cfg.MaxBodyBytes < 1024 || c.cfg.MaxBodyBytes > 10<<20 {
		errs = append(errs, legate.Invalid("max_body_bytes", "must be between 1024 and 10485760, got %d", c.cfg.MaxBodyBytes))
	}
	if c.cfg.MaxAttachmentBytes < 1024 || c.cfg.MaxAttachmentBytes > 25<<20 {
		errs = append(errs, legate.Invalid("max_attachment_bytes", "must be between 1024 and 26214400, got %d", c.cfg.MaxAttachmentBytes))
	}
	if c.selErr != nil {
		errs = append(errs, c.selErr)
	}
	if c.cfg.MaxConnections < 1 || c.cfg.MaxConnections > 32 {
		errs = append(errs, legate.Invalid("max_connections", "must be between 1 and 32, got %d", c.cfg.MaxConnections))
	}
	if c.cfg.Timeout <= 0 {
		errs = append(errs, legate.Invalid("timeout", "must be positive"))
	}
	if c.cfg.MaxAttempts < 1 || c.cfg.MaxAttempts > MaxAttemptsLimit {
		errs = append(errs, legate.Invalid("max_attempts", "must be between 1 and %d, got %d", MaxAttemptsLimit, c.cfg.MaxAttempts))
	}
	if c.cfg.RetryBackoff <= 0 {
		errs = append(errs, legate.Invalid("retry_backoff", "must be positive"))
	}
	return errors.Join(errs...)
}

// Tools lists the tools of the instance's toolsets.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// ToolCatalog lists every tool of the type, whatever the config selects.
func (c *Connector) ToolCatalog() []connectors.Tool { return c.catalog }

// Close closes the idle IMAP connections.
func (c *Connector) Close() error {
	c.imap.pool.close()
	return nil
}

// Test logs in to IMAP and lists the folders (the Drafts folder must be
// among them), then greets the SMTP server, reports its STARTTLS and AUTH
// support and logs in; each step is reported through connectors.Reportf.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	imapErr := c.imap.test(ctx, call)
	smtpErr := c.testSMTP(ctx, call)
	return errors.Join(imapErr, smtpErr)
}

// who says who signs in and sends for a call: the configured logins and
// sender, where {principal} stands for the caller's name.
type who struct {
	cfg  *Config
	addr *mail.Address // from, parsed, when it names no principal
}

// username is a configured login for call.
func (w who) username(call *connectors.Call, configured string) string {
	return strings.ReplaceAll(configured, "{principal}", call.Caller.Principal)
}

// from is the sender of call's drafts and mail.
func (w who) from(call *connectors.Call) *mail.Address {
	if !strings.Contains(w.cfg.From, "{principal}") {
		return w.addr
	}
	if a, err := mail.ParseAddress(w.username(call, w.cfg.From)); err == nil {
		return a
	}
	return &mail.Address{Address: w.username(call, "{principal}")}
}

// control refuses, after name resolution and just before connecting, an
// address netguard blocks, unless private networks are allowed.
func (c *Connector) control(_, address string, _ syscall.RawConn) error {
	if c.cfg.AllowPrivateNetworks {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &netguard.BlockedError{Reason: "unparsable"}
	}
	if netguard.Blocked(ap.Addr()) {
		return &netguard.BlockedError{Addr: ap.Addr().WithZone(""), Reason: "private or reserved"}
	}
	return nil
}

func oneOf(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

func isIPv6(h string) bool {
	a, err := netip.ParseAddr(h)
	return err == nil && a.Is6()
}

// AdapterVersion is the version of the email connector's own code.
const AdapterVersion = "1.0.0"

type described struct{} // what every email instance says of itself (connectors.Describer)

// Describe says the connector's version and the protocols it speaks.
func (described) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion, APIVersion: "IMAP4rev1, SMTP"}
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.Closer      = (*Connector)(nil)
	_ connectors.ToolCatalog = (*Connector)(nil)
	_ connectors.Describer   = (*Connector)(nil)
)
