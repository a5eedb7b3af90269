package netguard_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// counter is a real listener on 127.0.0.1 that counts the connections it
// accepts: a refused request must leave it at zero.
type counter struct{ *connectortest.Listener }

func newCounter(t *testing.T) *counter { return &counter{connectortest.NewListener(t)} }

func (c *counter) port() string { return c.Port() }

// zero fails the test if any connection reached the listener.
func (c *counter) zero(t *testing.T) {
	t.Helper()
	if n := c.Connections(t); n != 0 {
		t.Fatalf("counting listener accepted %d connection(s); want 0", n)
	}
}

func get(t *testing.T, client *http.Client, u string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func wantBlocked(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("error %v; want one matching netguard.ErrBlocked", err)
	}
	for _, want := range []string{"refused", "allow_private_networks: true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestBlocked(t *testing.T) {
	tests := map[string]struct {
		addr    string
		blocked bool
	}{
		"metadata":                  {"169.254.169.254", true},
		"link-local":                {"169.254.0.1", true},
		"loopback":                  {"127.0.0.1", true},
		"loopback range":            {"127.255.0.9", true},
		"unspecified v4":            {"0.0.0.0", true},
		"this network":              {"0.1.2.3", true},
		"private 10":                {"10.0.0.1", true},
		"private 172":               {"172.16.0.1", true},
		"private 172 top":           {"172.31.255.255", true},
		"private 192":               {"192.168.1.1", true},
		"cgnat":                     {"100.64.0.1", true},
		"cgnat top":                 {"100.127.255.255", true},
		"multicast":                 {"224.0.0.1", true},
		"broadcast":                 {"255.255.255.255", true},
		"reserved":                  {"240.0.0.1", true},
		"benchmark":                 {"198.18.0.1", true},
		"v6 loopback":               {"::1", true},
		"v6 unspecified":            {"::", true},
		"ula":                       {"fd00::1", true},
		"ula fc":                    {"fc00::1", true},
		"v6 link-local":             {"fe80::1", true},
		"v6 link-local zone":        {"fe80::1%eth0", true},
		"v6 multicast":              {"ff02::1", true},
		"mapped metadata":           {"::ffff:169.254.169.254", true},
		"mapped metadata hex":       {"::ffff:a9fe:a9fe", true},
		"mapped loopback":           {"::ffff:127.0.0.1", true},
		"compatible metadata":       {"::a9fe:a9fe", true},
		"nat64 metadata":            {"64:ff9b::a9fe:a9fe", true},
		"nat64 local-use loopback":  {"64:ff9b:1::7f00:1", true},
		"6to4 loopback":             {"2002:7f00:1::1", true},
		"6to4 private":              {"2002:c0a8:101::", true},
		"teredo":                    {"2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
		"public v4":                 {"93.184.216.34", false},
		"public dns":                {"8.8.8.8", false},
		"next to cgnat":             {"100.128.0.1", false},
		"next to private 172":       {"172.32.0.1", false},
		"public v6":                 {"2606:4700:4700::1111", false},
		"mapped public":             {"::ffff:8.8.8.8", false},
		"nat64 public":              {"64:ff9b::808:808", false},
		"6to4 public":               {"2002:808:808::1", false},
		"global unicast v6 2001:db": {"2001:4860:4860::8888", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ip := netip.MustParseAddr(tc.addr)
			if got := netguard.Blocked(ip); got != tc.blocked {
				t.Errorf("Blocked(%s) = %v; want %v", ip, got, tc.blocked)
			}
		})
	}
	if !netguard.Blocked(netip.Addr{}) {
		t.Error("the zero Addr is not blocked")
	}
}

func TestRefused(t *testing.T) {
	c := newCounter(t)
	p := c.port()
	client := netguard.NewClient(netguard.Options{Timeout: 3 * time.Second})
	tests := map[string]string{
		"metadata":                "http://169.254.169.254/latest/meta-data/",
		"mapped metadata":         "http://[::ffff:169.254.169.254]/",
		"mapped metadata hex":     "http://[::ffff:a9fe:a9fe]/",
		"nat64 metadata":          "http://[64:ff9b::a9fe:a9fe]/",
		"localhost":               "http://localhost:" + p + "/",
		"localhost trailing dot":  "http://localhost.:" + p + "/",
		"loopback":                "http://127.0.0.1:" + p + "/",
		"loopback elsewhere":      "http://127.1.2.3:" + p + "/",
		"mapped loopback":         "http://[::ffff:127.0.0.1]:" + p + "/",
		"6to4 loopback":           "http://[2002:7f00:1::1]:" + p + "/",
		"v6 loopback":             "http://[::1]:" + p + "/",
		"private 10":              "http://10.0.0.1/",
		"private 172":             "http://172.16.0.1/",
		"private 192":             "http://192.168.1.1/",
		"ula":                     "http://[fd00::1]/",
		"v6 link-local":           "http://[fe80::1]/",
		"cgnat":                   "http://100.64.0.1/",
		"unspecified":             "http://0.0.0.0:" + p + "/",
		"unspecified v6":          "http://[::]:" + p + "/",
		"broadcast":               "http://255.255.255.255/",
		"https metadata":          "https://169.254.169.254/",
		"metadata with user info": "http://user:pass@169.254.169.254/",
	}
	for name, u := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := get(t, client, u)
			wantBlocked(t, err)
		})
	}
	c.zero(t)
}

func TestAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	client := netguard.NewClient(netguard.Options{AllowPrivate: true})
	resp, err := get(t, client, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// redirector answers /to?u=URL with a redirect to URL and /ok with 200.
func redirector(t *testing.T) (*httptest.Server, netip.AddrPort) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/to":
			http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, netip.MustParseAddrPort(srv.Listener.Addr().String())
}

func TestRedirects(t *testing.T) {
	srv, first := redirector(t)
	c := newCounter(t)
	p := c.port()
	// Only the redirector's own address is admitted; the rest of loopback
	// stays blocked.
	opts := netguard.WithAllowAddr(netguard.Options{Timeout: 3 * time.Second}, func(ap netip.AddrPort) bool {
		return ap == first
	})
	client := netguard.NewClient(opts)

	t.Run("allowed hop", func(t *testing.T) {
		resp, err := get(t, client, srv.URL+"/to?u="+url.QueryEscape(srv.URL+"/ok"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ok" {
			t.Fatalf("status %d at %s; want 200 at /ok", resp.StatusCode, resp.Request.URL)
		}
	})

	tests := map[string]string{
		"to metadata":        "http://169.254.169.254/latest/meta-data/",
		"to mapped metadata": "http://[::ffff:169.254.169.254]/",
		"to loopback":        "http://127.0.0.1:" + p + "/",
		"to localhost":       "http://localhost:" + p + "/",
		"to mapped loopback": "http://[::ffff:7f00:1]:" + p + "/",
		"to unspecified":     "http://0.0.0.0:" + p + "/",
		"to private":         "http://10.1.2.3/",
	}
	for name, target := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := get(t, client, srv.URL+"/to?u="+url.QueryEscape(target))
			wantBlocked(t, err)
		})
	}
	c.zero(t)
}

func TestRedirectLimits(t *testing.T) {
	srv, _ := redirector(t)
	t.Run("too many", func(t *testing.T) {
		client := netguard.NewClient(netguard.Options{AllowPrivate: true, MaxRedirects: 3})
		_, err := get(t, client, srv.URL+"/loop")
		if !errors.Is(err, netguard.ErrTooManyRedirects) {
			t.Fatalf("error %v; want ErrTooManyRedirects", err)
		}
	})
	t.Run("none followed", func(t *testing.T) {
		client := netguard.NewClient(netguard.Options{AllowPrivate: true, MaxRedirects: -1})
		resp, err := get(t, client, srv.URL+"/loop")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("status %d; want the 302 itself", resp.StatusCode)
		}
	})
	t.Run("non-http scheme", func(t *testing.T) {
		client := netguard.NewClient(netguard.Options{AllowPrivate: true})
		_, err := get(t, client, srv.URL+"/to?u="+url.QueryEscape("file:///etc/passwd"))
		if err == nil {
			t.Fatal("redirect to file:// followed")
		}
	})
}

// fakeDNS serves A queries for every name with answer over UDP on
// 127.0.0.1 and returns a resolver that asks only it, and its query count.
func fakeDNS(t *testing.T, answer netip.Addr) (*net.Resolver, *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var queries atomic.Int64
	done := make(chan struct{})
	t.Cleanup(func() {
		pc.Close()
		<-done // the server's goroutine ends with the test
	})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], answer); resp != nil {
				queries.Add(1)
				pc.WriteTo(resp, from)
			}
		}
	}()
	r := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", pc.LocalAddr().String())
		},
	}
	return r, &queries
}

// dnsAnswer answers a one-question query: an A record with answer for type
// A, no records (NOERROR) for anything else.
func dnsAnswer(q []byte, answer netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	i := 12
	for i < len(q) && q[i] != 0 {
		i += int(q[i]) + 1
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1 : i+3])
	question := q[12 : i+5]
	an := uint16(0)
	if qtype == 1 && answer.Is4() {
		an = 1
	}
	resp := []byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, byte(an), 0, 0, 0, 0}
	resp = append(resp, question...)
	if an == 1 {
		a := answer.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, a[:]...)
	}
	return resp
}

func TestRebindingResolver(t *testing.T) {
	const name = "api.rebind-test.example.com"
	resolver, queries := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))

	// Control: with private networks allowed, the name does reach a
	// 127.0.0.1 server, so the refusal below is the guard's doing.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	open := netguard.NewClient(netguard.Options{AllowPrivate: true, Resolver: resolver})
	if _, err := get(t, open, "http://"+net.JoinHostPort(name, strconv.Itoa(port))+"/"); err != nil {
		t.Fatalf("control request through the fake resolver: %v", err)
	}

	c := newCounter(t)
	before := queries.Load()
	guarded := netguard.NewClient(netguard.Options{Resolver: resolver, Timeout: 3 * time.Second})
	_, err := get(t, guarded, "http://"+name+":"+c.port()+"/")
	wantBlocked(t, err)
	if !strings.Contains(err.Error(), name) {
		t.Errorf("error %q does not name the host", err)
	}
	if queries.Load() == before {
		t.Error("the fake resolver was not asked: the refusal did not happen at dial time")
	}

	// A redirect to the rebinding name, from an admitted first hop, is
	// refused at dial time too.
	redir, first := redirector(t)
	hop := netguard.NewClient(netguard.WithAllowAddr(
		netguard.Options{Resolver: resolver, Timeout: 3 * time.Second},
		func(ap netip.AddrPort) bool { return ap == first }))
	_, err = get(t, hop, redir.URL+"/to?u="+url.QueryEscape("http://"+name+":"+c.port()+"/"))
	wantBlocked(t, err)
	c.zero(t)
}

func TestNoProxyFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:9")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:9")
	client := netguard.NewClient(netguard.Options{})
	rt := client.Transport
	if w, ok := rt.(interface{ Unwrap() http.RoundTripper }); ok {
		rt = w.Unwrap() // the trace context's wrapper
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", client.Transport)
	}
	if tr.Proxy != nil {
		t.Fatal("transport takes a proxy")
	}
	if tr.MaxIdleConnsPerHost < 16 || tr.TLSHandshakeTimeout == 0 || tr.ResponseHeaderTimeout == 0 {
		t.Errorf("transport not tuned: %+v", tr)
	}
}

// TestTimeoutWithoutRedirects: a client that follows no redirects bounds
// each request in its transport instead of with http.Client.Timeout, and
// still ends one that is slow to answer or slow to send its body, as a
// timeout; a request whose context ends sooner is bounded by that.
func TestTimeoutWithoutRedirects(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			w.Write([]byte("first"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	opts := netguard.WithAllowAddr(netguard.Options{Timeout: 200 * time.Millisecond, MaxRedirects: -1}, func(netip.AddrPort) bool { return true })
	client := netguard.NewClient(opts)
	if client.Timeout != 0 {
		t.Fatalf("Client.Timeout = %v; want the transport to bound each request", client.Timeout)
	}
	timedOut := func(err error) bool {
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}

	start := time.Now()
	_, err := client.Get(srv.URL + "/slow-headers")
	if !timedOut(err) || time.Since(start) > 5*time.Second {
		t.Errorf("slow headers: err %v after %v; want a timeout after 200ms", err, time.Since(start))
	}

	start = time.Now()
	resp, err := client.Get(srv.URL + "/slow-body")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !timedOut(err) || time.Since(start) > 5*time.Second {
		t.Errorf("slow body: err %v after %v; want a timeout after 200ms", err, time.Since(start))
	}

	// A context ending sooner than the timeout is the request's bound.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow-headers", nil)
	start = time.Now()
	if _, err := client.Do(req); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 150*time.Millisecond*10 {
		t.Errorf("context deadline: err %v after %v", err, time.Since(start))
	}

	// A client that follows redirects keeps Client.Timeout, which bounds
	// the whole chain.
	if c := netguard.NewClient(netguard.Options{Timeout: time.Second}); c.Timeout != time.Second {
		t.Errorf("redirecting client: Timeout = %v; want 1s", c.Timeout)
	}
}

func TestCheckHost(t *testing.T) {
	tests := map[string]struct {
		host    string
		blocked bool
	}{
		"metadata":        {"169.254.169.254", true},
		"metadata port":   {"169.254.169.254:80", true},
		"bracketed v6":    {"[::1]:8080", true},
		"bare v6":         {"fd00::1", true},
		"localhost":       {"localhost", true},
		"localhost upper": {"LOCALHOST:80", true},
		"sub.localhost":   {"app.localhost", true},
		"public name":     {"api.example.com", false},
		"public ip":       {"8.8.8.8:443", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := netguard.CheckHost(tc.host)
			if got := errors.Is(err, netguard.ErrBlocked); got != tc.blocked {
				t.Fatalf("CheckHost(%q) = %v; want blocked %v", tc.host, err, tc.blocked)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := map[string]struct {
		value string
		want  time.Duration
		ok    bool
	}{
		"absent":   {"", 0, false},
		"seconds":  {"7", 7 * time.Second, true},
		"zero":     {"0", 0, true},
		"negative": {"-3", 0, false},
		"date":     {now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		"past":     {now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		"garbage":  {"soon", 0, false},
		"huge":     {"99999999999999999", time.Duration(1<<63-1) / time.Second * time.Second, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := http.Header{}
			if tc.value != "" {
				h.Set("Retry-After", tc.value)
			}
			got, ok := netguard.RetryAfter(h, now)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("RetryAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestHeaderChecks(t *testing.T) {
	names := map[string]bool{"X-Api-Key": true, "x_y": true, "": false, "Bad Name": false, "a:b": false, "ü": false}
	for n, want := range names {
		if got := netguard.ValidHeaderName(n); got != want {
			t.Errorf("ValidHeaderName(%q) = %v", n, got)
		}
	}
	values := map[string]bool{"plain": true, "tab\tok": true, "a\r\nX-Evil: 1": false, "nul\x00": false, "": true}
	for v, want := range values {
		if got := netguard.ValidHeaderValue(v); got != want {
			t.Errorf("ValidHeaderValue(%q) = %v", v, got)
		}
	}
	for _, n := range []string{"host", "Content-Length", "transfer-encoding", "Connection", "TE", "Proxy-Authorization"} {
		if !netguard.ReservedHeader(n) {
			t.Errorf("ReservedHeader(%q) = false", n)
		}
	}
	if netguard.ReservedHeader("Accept") {
		t.Error("Accept is reserved")
	}
}

// Options.Allow admits the hosts an operator configured, by host and
// port: another port of the same loopback address, another loopback
// address and a redirect from the allowed host elsewhere stay refused,
// and the refusal carries Options.Hint.
func TestAllowHosts(t *testing.T) {
	srv, _ := redirector(t)
	hp, err := netguard.HostPort(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	c := newCounter(t)
	p := c.port()
	client := netguard.NewClient(netguard.Options{Timeout: 3 * time.Second, Allow: []string{hp}, Hint: "only the upstream's own host is allowed"})
	if resp, err := get(t, client, srv.URL+"/to?u="+url.QueryEscape(srv.URL+"/ok")); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the allowed host: %v %v", resp, err)
	}
	for name, u := range map[string]string{
		"other port":        "http://127.0.0.1:" + p + "/",
		"localhost":         "http://localhost:" + p + "/",
		"redirect to other": srv.URL + "/to?u=" + url.QueryEscape("http://127.0.0.1:"+p+"/"),
		"metadata":          "http://169.254.169.254/",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := get(t, client, u)
			if !errors.Is(err, netguard.ErrBlocked) || !strings.Contains(err.Error(), "only the upstream's own host is allowed") || strings.Contains(err.Error(), "allow_private_networks") {
				t.Fatalf("error %v; want a refusal with the hint", err)
			}
		})
	}
	c.zero(t)
}

// BenchmarkGetWithDeadline: a GET whose context has a deadline (as each
// attempt of the SaaS kit has), through a client that follows no
// redirects: bounded in the transport (what NewClient builds) against
// http.Client.Timeout (what it built before).
func BenchmarkGetWithDeadline(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	opts := netguard.WithAllowAddr(netguard.Options{Timeout: 30 * time.Second, MaxRedirects: -1}, func(netip.AddrPort) bool { return true })
	bounded := netguard.NewClient(opts)
	timed := *bounded
	timed.Transport = bounded.Transport.(interface{ Unwrap() http.RoundTripper }).Unwrap()
	timed.Timeout = 30 * time.Second
	for _, c := range []struct {
		name   string
		client *http.Client
	}{{"transport", bounded}, {"client-timeout", &timed}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := c.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				cancel()
			}
		})
	}
}
