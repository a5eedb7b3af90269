// Package netguard is the one outbound HTTP client every connector uses. It
// defends against server-side request forgery (SSRF): a model that controls
// a URL must not reach the gateway's own host, its private network or the
// cloud metadata service.
//
//	client := netguard.NewClient(netguard.Options{Timeout: 30 * time.Second})
//	resp, err := client.Get(url)
//	if errors.Is(err, netguard.ErrBlocked) {
//		// refused: a private address; the error says how to allow it
//	}
//
// The address is checked where it cannot be fooled: in net.Dialer.Control,
// after name resolution, against the IP the socket is about to connect to.
// A name that resolves to a public address at one lookup and to 127.0.0.1
// at the next (DNS rebinding) is still refused, and so is every redirect,
// which is dialed like any request. Redirects to a literal address are also
// refused before any dial. Proxy settings from the environment are never
// used: a proxy would make the connected address meaningless.
package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/legate-mcp/legate/telemetry/spans"
)

// Defaults used when an Options field is zero.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 10
)

// ErrTooManyRedirects is returned (wrapped in *url.Error) when a request is
// redirected more than Options.MaxRedirects times. It is not worth retrying.
var ErrTooManyRedirects = errors.New("too many redirects")

// Options configures a client. The zero value is the safe default: private
// networks refused, 30s timeout, 10 redirects.
type Options struct {
	// AllowPrivate turns the address check off: loopback, private and
	// link-local addresses may be reached. It maps to a connector's
	// allow_private_networks setting.
	AllowPrivate bool
	// Timeout bounds a whole request, reading the body included; zero means
	// DefaultTimeout. A request whose context ends sooner is bounded by it.
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed; zero means
	// DefaultMaxRedirects, a negative value follows none (the 3xx response
	// is returned to the caller).
	MaxRedirects int
	// Resolver resolves names; nil means net.DefaultResolver. Tests point it
	// at a fake DNS server.
	Resolver *net.Resolver
	// RootCAs, when set, are the certificate authorities trusted instead
	// of the system's (an internal CA).
	RootCAs *x509.CertPool
	// Allow names the hosts reached even on a blocked address, each as
	// "host:port" with the port explicit (see HostPort): the ones an
	// operator configured, such as an upstream's own URL on loopback. A
	// listed name is trusted as it resolves. Every other host is checked
	// as usual, so that what a listed host answers (a redirect, an
	// endpoint named in its metadata) cannot widen what was allowed.
	Allow []string
	// Hint, when set, replaces the refusal's advice (set
	// allow_private_networks: true on the connector) with what allows an
	// address where the client is used.
	Hint string

	// allowAddr, when set, admits one address that would be blocked. Only
	// the package's tests set it (export_test.go), to let a first hop reach
	// a 127.0.0.1 test server while the rest of loopback stays blocked.
	allowAddr func(netip.AddrPort) bool
}

// NewClient returns an *http.Client whose every connection, redirects
// included, goes to an address the options allow. Each client has its own
// connection pool; keep one per connector instance.
func NewClient(opts Options) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	g := &guard{opts: opts, allow: map[string]bool{}}
	for _, hp := range opts.Allow {
		g.allow[normalHostPort(hp)] = true
	}
	g.dialer = &net.Dialer{
		Timeout:   min(timeout, 10*time.Second),
		KeepAlive: 30 * time.Second,
		Resolver:  opts.Resolver,
		Control:   g.control,
	}
	g.allowed = &net.Dialer{Timeout: g.dialer.Timeout, KeepAlive: g.dialer.KeepAlive, Resolver: opts.Resolver}
	transport := &http.Transport{
		Proxy:                 nil, // never from the environment
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: 1 * time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.RootCAs},
	}
	client := &http.Client{
		Transport:     spans.Transport(transport), // traceparent, within a traced call
		Timeout:       timeout,
		CheckRedirect: g.checkRedirect,
	}
	if opts.MaxRedirects < 0 {
		// One request is one round trip, so the transport can bound it
		// instead of the client: Client.Timeout starts a goroutine, a timer
		// and a channel for every request, even one whose context ends
		// sooner (each attempt of the SaaS kit).
		client.Transport = bounded{client.Transport, timeout}
		client.Timeout = 0
	}
	return client
}

// bounded gives each request at most timeout, reading its body included,
// as http.Client.Timeout does for a client that follows no redirects: a
// request whose context ends within timeout is sent as it is; any other
// gets a context that ends then and is cancelled when its body is closed.
type bounded struct {
	base    http.RoundTripper
	timeout time.Duration
}

func (b bounded) RoundTrip(req *http.Request) (*http.Response, error) {
	end := time.Now().Add(b.timeout)
	if d, ok := req.Context().Deadline(); ok && !d.After(end) {
		return b.base.RoundTrip(req)
	}
	ctx, cancel := context.WithDeadline(req.Context(), end)
	resp, err := b.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func (b bounded) Unwrap() http.RoundTripper { return b.base }

// cancelOnClose ends a bounded request's context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

type guard struct {
	opts   Options
	dialer *net.Dialer
	// allowed dials the hosts of Options.Allow, without the check.
	allowed *net.Dialer
	allow   map[string]bool // normalHostPort of Options.Allow
}

// HostPort is the "host:port" of rawURL, its scheme's port when it names
// none: the form Options.Allow takes.
func HostPort(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	if u.Host == "" {
		return "", fmt.Errorf("%q has no host", rawURL)
	}
	return hostPort(u), nil
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return normalHostPort(net.JoinHostPort(u.Hostname(), port))
}

// normalHostPort is hp lower-cased, without a final dot on its name.
func normalHostPort(hp string) string {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return strings.ToLower(hp)
	}
	return net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port)
}

// isAllowed reports whether hostport is one of Options.Allow.
func (g *guard) isAllowed(hostport string) bool {
	return len(g.allow) > 0 && g.allow[normalHostPort(hostport)]
}

// hint sets the refusal's advice of err, when it is a refusal.
func (g *guard) hint(err error) error {
	var be *BlockedError
	if g.opts.Hint != "" && errors.As(err, &be) {
		be.Hint = g.opts.Hint
	}
	return err
}

// control runs after resolution, just before connect(2): address is the IP
// the socket will connect to.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Reason: "unparsable"}
	}
	return g.check(ap)
}

func (g *guard) check(ap netip.AddrPort) error {
	if g.opts.AllowPrivate {
		return nil
	}
	if g.opts.allowAddr != nil && g.opts.allowAddr(ap) {
		return nil
	}
	if r := reason(ap.Addr()); r != "" {
		return &BlockedError{Addr: ap.Addr().WithZone(""), Reason: r}
	}
	return nil
}

// dialContext names the requested host in a refusal, which Control cannot.
// A localhost name is refused before resolution, whatever the resolver says.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.isAllowed(addr) {
		return g.allowed.DialContext(ctx, network, addr)
	}
	if host, _, err := net.SplitHostPort(addr); err == nil && !g.opts.AllowPrivate {
		if _, perr := netip.ParseAddr(host); perr != nil {
			if err := CheckHost(host); err != nil {
				return nil, g.hint(err)
			}
		}
	}
	conn, err := g.dialer.DialContext(ctx, network, addr)
	if err != nil {
		var be *BlockedError
		if errors.As(err, &be) && be.Host == "" {
			if host, _, serr := net.SplitHostPort(addr); serr == nil {
				be.Host = host
			}
		}
		return nil, g.hint(err)
	}
	return conn, nil
}

// checkRedirect limits redirects and refuses a literal blocked address
// before any dial; names are checked when dialed.
func (g *guard) checkRedirect(req *http.Request, via []*http.Request) error {
	max := g.opts.MaxRedirects
	if max == 0 {
		max = DefaultMaxRedirects
	}
	if max < 0 {
		return http.ErrUseLastResponse
	}
	if len(via) > max {
		return fmt.Errorf("stopped after %d redirects: %w", max, ErrTooManyRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to scheme %q refused", req.URL.Scheme)
	}
	if g.opts.AllowPrivate || g.isAllowed(hostPort(req.URL)) {
		return nil
	}
	err := CheckHost(req.URL.Host)
	var be *BlockedError
	if errors.As(err, &be) && g.opts.allowAddr != nil {
		port := req.URL.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[req.URL.Scheme]
		}
		if ap, perr := netip.ParseAddrPort(net.JoinHostPort(be.Addr.String(), port)); perr == nil && g.opts.allowAddr(ap) {
			return nil
		}
	}
	return g.hint(err)
}

// ParseURL parses raw as a URL a connector's config names for it to reach:
// absolute http or https, with a host, no user info and no fragment (a
// query is allowed: some receivers take their key there). Its error says
// what is wrong, for the config key's message.
func ParseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must be an absolute http or https URL")
	case u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.User != nil:
		return nil, errors.New("must not hold user info")
	case u.Fragment != "":
		return nil, errors.New("must not hold a fragment")
	}
	return u, nil
}
