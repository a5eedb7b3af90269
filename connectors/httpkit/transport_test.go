package httpkit_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

func TestTransportError(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	closed := closedAddr(t)
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.String(), http.StatusFound)
	}))
	defer loop.Close()

	tests := map[string]struct {
		opts   netguard.Options
		url    string
		ctx    func() (context.Context, context.CancelFunc)
		code   legate.Code
		substr string
	}{
		"private address refused": {netguard.Options{}, slow.URL, nil, legate.CodePermissionDenied, "allow_private_networks: true"},
		"connection refused":      {netguard.Options{AllowPrivate: true}, "http://" + closed, nil, legate.CodeTransient, "svc: request failed: "},
		"too many redirects":      {netguard.Options{AllowPrivate: true, MaxRedirects: 2}, loop.URL, nil, legate.CodeAdapterMapping, "svc: stopped after 2 redirects"},
		"client timeout":          {netguard.Options{AllowPrivate: true, Timeout: 50 * time.Millisecond}, slow.URL, nil, legate.CodeTimeout, "svc: request timed out"},
		"call deadline": {netguard.Options{AllowPrivate: true}, slow.URL, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(t.Context(), 50*time.Millisecond)
		}, legate.CodeTimeout, "svc: request timed out"},
		"call cancelled": {netguard.Options{AllowPrivate: true}, slow.URL, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}, legate.CodeTransient, "svc: request cancelled"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := t.Context(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tc.url+"/secret-path?key=k", nil)
			_, err := netguard.NewClient(tc.opts).Do(req)
			if err == nil {
				t.Fatal("request succeeded")
			}
			e := httpkit.TransportError(ctx, err, "svc")
			if e.Code != tc.code || !strings.Contains(e.Message, tc.substr) {
				t.Errorf("got %s %q; want %s with %q", e.Code, e.Message, tc.code, tc.substr)
			}
			if strings.Contains(e.Message, "secret-path") || strings.Contains(e.Message, "key=k") {
				t.Errorf("message holds the URL: %q", e.Message)
			}
			if e.Err != err {
				t.Errorf("cause %v; want %v", e.Err, err)
			}
		})
	}
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// An error that has its code keeps it, wrapped by the client or not.
func TestTransportErrorKeepsCodes(t *testing.T) {
	coded := legate.Errorf(legate.CodeRateLimited, "svc: rate_limit reached")
	for name, err := range map[string]error{
		"as it is":              coded,
		"wrapped by the client": &url.Error{Op: "Get", URL: "http://h/secret-path", Err: coded},
	} {
		t.Run(name, func(t *testing.T) {
			if got := httpkit.TransportError(t.Context(), err, "other"); got != coded {
				t.Errorf("got %v; want %v", got, coded)
			}
		})
	}
}

// A name that does not resolve is TRANSIENT (never NOT_FOUND, which would
// say the object asked for is missing) and names the host, never the
// resolver; a resolver that fails to answer is TRANSIENT too.
func TestTransportErrorDNS(t *testing.T) {
	dnsErr := func(notFound, timeout bool) error {
		return &url.Error{Op: "Get", URL: "https://no-such.example/secret-path", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "no-such.example", Server: "127.0.0.53:53", IsNotFound: notFound, IsTimeout: timeout}}}
	}
	tests := map[string]struct {
		err    error
		code   legate.Code
		substr string
	}{
		"no such host":     {dnsErr(true, false), legate.CodeTransient, `svc: host "no-such.example" could not be resolved`},
		"resolver timeout": {dnsErr(false, true), legate.CodeTimeout, "svc: request timed out"},
		"resolver failure": {dnsErr(false, false), legate.CodeTransient, "svc: request failed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := httpkit.TransportError(t.Context(), tc.err, "svc")
			if e.Code != tc.code || !strings.Contains(e.Message, tc.substr) {
				t.Errorf("got %s %q; want %s with %q", e.Code, e.Message, tc.code, tc.substr)
			}
			if name == "no such host" && (strings.Contains(e.Message, "127.0.0.53") || strings.Contains(e.Message, "secret-path")) {
				t.Errorf("message names the resolver or the URL: %q", e.Message)
			}
		})
	}
}
