package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/webhook"
)

func TestSendSigned(t *testing.T) {
	rc := newReceiver(t, "s3cret", nil)
	c := build(t, rc.srv.URL+"/hooks?k=1", "headers:\n  X-Source: legate")
	d, err := send(t, c, `{"payload": {"order": 42, "items": [1, 2]}, "event": "order.created"}`, "op-1",
		map[string]string{"signing_secret": "s3cret", "token": "tok-abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if *d != (webhook.Delivery{DeliveryID: "op-1", Status: 200, Attempts: 1}) {
		t.Errorf("result %+v", d)
	}
	got := rc.attempts()
	if len(got) != 1 {
		t.Fatalf("%d attempts", len(got))
	}
	a := got[0]
	if a.verify != nil {
		t.Fatalf("receiver could not verify the signature: %v", a.verify)
	}
	checks := map[string]string{
		"Content-Type":         "application/json",
		webhook.DeliveryHeader: "op-1",
		webhook.EventHeader:    "order.created",
		"X-Source":             "legate",
		"Authorization":        "Bearer tok-abcdef",
	}
	for h, want := range checks {
		if v := a.header.Get(h); v != want {
			t.Errorf("%s = %q; want %q", h, v, want)
		}
	}
	if string(a.body) != `{"order":42,"items":[1,2]}` {
		t.Errorf("body %s", a.body)
	}
	sig := a.header.Get(webhook.SignatureHeader)
	if !regexp.MustCompile(`^t=\d+,v1=[0-9a-f]{64}$`).MatchString(sig) {
		t.Errorf("signature header %q", sig)
	}
	if err := webhook.Verify("wrong secret", sig, a.body, time.Minute, time.Now()); !errors.Is(err, webhook.ErrSignatureMismatch) {
		t.Errorf("a wrong secret verified: %v", err)
	}
	if err := webhook.Verify("s3cret", sig, a.body, time.Minute, time.Now().Add(2*time.Minute)); !errors.Is(err, webhook.ErrTimestamp) {
		t.Errorf("a stale signature verified: %v", err)
	}
}

func TestSendUnsigned(t *testing.T) {
	rc := newReceiver(t, "", nil)
	c := build(t, rc.srv.URL)
	if _, err := send(t, c, `{"payload":"hi"}`, "op-2", nil); err != nil {
		t.Fatal(err)
	}
	a := rc.attempts()[0]
	if a.header.Get(webhook.SignatureHeader) != "" || a.header.Get(webhook.EventHeader) != "" || a.header.Get("Authorization") != "" {
		t.Errorf("unexpected headers %v", a.header)
	}
}

func TestSendRetriesWithOneDeliveryID(t *testing.T) {
	webhook.SetBackoffBase(t, time.Millisecond)
	rc := newReceiver(t, "s3cret", func(i int, w http.ResponseWriter) {
		switch i {
		case 0, 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	c := build(t, rc.srv.URL)
	d, err := send(t, c, `{"payload":{"n":1}}`, "op-retry-7", map[string]string{"signing_secret": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if *d != (webhook.Delivery{DeliveryID: "op-retry-7", Status: 200, Attempts: 4}) {
		t.Errorf("result %+v", d)
	}
	got := rc.attempts()
	if len(got) != 4 {
		t.Fatalf("receiver saw %d attempts; want 4", len(got))
	}
	for i, a := range got {
		if id := a.header.Get(webhook.DeliveryHeader); id != "op-retry-7" {
			t.Errorf("attempt %d: delivery id %q", i+1, id)
		}
		if a.verify != nil {
			t.Errorf("attempt %d: signature: %v", i+1, a.verify)
		}
		if string(a.body) != `{"n":1}` {
			t.Errorf("attempt %d: body %s", i+1, a.body)
		}
	}
	if wait := got[3].at.Sub(got[2].at); wait < 900*time.Millisecond {
		t.Errorf("Retry-After: 1 not honoured: next attempt after %v", wait)
	}
}

func TestSendRandomDeliveryID(t *testing.T) {
	webhook.SetBackoffBase(t, time.Millisecond)
	rc := newReceiver(t, "", func(i int, w http.ResponseWriter) {
		if i == 0 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	c := build(t, rc.srv.URL)
	d, err := send(t, c, `{"payload":[]}`, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(d.DeliveryID) {
		t.Errorf("delivery id %q is not a random UUID", d.DeliveryID)
	}
	for i, a := range rc.attempts() {
		if a.header.Get(webhook.DeliveryHeader) != d.DeliveryID {
			t.Errorf("attempt %d: id %q; want %q", i+1, a.header.Get(webhook.DeliveryHeader), d.DeliveryID)
		}
	}
	d2, err := send(t, c, `{"payload":[]}`, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d2.DeliveryID == d.DeliveryID {
		t.Error("two calls without an operation id share a delivery id")
	}
	// An operation id unfit for a header is hashed, stably.
	d3, _ := send(t, c, `{"payload":[]}`, "op with spaces\n", nil)
	d4, _ := send(t, c, `{"payload":[]}`, "op with spaces\n", nil)
	if d3 == nil || d4 == nil || d3.DeliveryID != d4.DeliveryID || strings.ContainsAny(d3.DeliveryID, " \n") {
		t.Errorf("hashed ids %v, %v", d3, d4)
	}
}

func TestSendNoRetry(t *testing.T) {
	webhook.SetBackoffBase(t, time.Millisecond)
	tests := map[string]struct {
		status int
		code   legate.Code
	}{
		"400":      {400, legate.CodeInvalidArgument},
		"401":      {401, legate.CodeAuthExpired},
		"403":      {403, legate.CodePermissionDenied},
		"404":      {404, legate.CodeNotFound},
		"409":      {409, legate.CodeConflict},
		"413":      {413, legate.CodeInvalidArgument},
		"422":      {422, legate.CodeInvalidArgument},
		"501":      {501, legate.CodeTransient},
		"redirect": {302, legate.CodeAdapterMapping},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			target := newReceiver(t, "", nil)
			rc := newReceiver(t, "", func(i int, w http.ResponseWriter) {
				w.Header().Set("Location", target.srv.URL)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, `{"error":"bad thing","echo":"tok-abcdef"}`)
			})
			c := build(t, rc.srv.URL)
			_, err := send(t, c, `{"payload":{}}`, "op-3", map[string]string{"token": "tok-abcdef"})
			ce := wantCode(t, err, tc.code)
			if n := len(rc.attempts()); n != 1 {
				t.Errorf("%d attempts; want 1", n)
			}
			if n := len(target.attempts()); n != 0 {
				t.Errorf("redirect followed")
			}
			if !strings.Contains(ce.Message, "op-3") || !strings.Contains(ce.Message, "bad thing") {
				t.Errorf("message %q does not name the delivery and the receiver's words", ce.Message)
			}
			if strings.Contains(ce.Error(), "tok-abcdef") || strings.Contains(ce.Error(), rc.srv.URL) {
				t.Errorf("message holds the token or the URL: %q", ce.Error())
			}
		})
	}
}

func TestSendGivesUp(t *testing.T) {
	webhook.SetBackoffBase(t, time.Millisecond)
	t.Run("5xx", func(t *testing.T) {
		rc := newReceiver(t, "", func(i int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
		c := build(t, rc.srv.URL, "max_attempts: 3")
		_, err := send(t, c, `{"payload":1}`, "op-4", nil)
		ce := wantCode(t, err, legate.CodeTransient)
		if n := len(rc.attempts()); n != 3 {
			t.Errorf("%d attempts; want 3", n)
		}
		if !strings.Contains(ce.Message, "after 3 attempts") {
			t.Errorf("message %q", ce.Message)
		}
	})
	t.Run("long retry-after", func(t *testing.T) {
		rc := newReceiver(t, "", func(i int, w http.ResponseWriter) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		c := build(t, rc.srv.URL)
		_, err := send(t, c, `{"payload":1}`, "op-5", nil)
		ce := wantCode(t, err, legate.CodeRateLimited)
		if ce.RetryAfter != 120*time.Second {
			t.Errorf("RetryAfter %v", ce.RetryAfter)
		}
		if n := len(rc.attempts()); n != 1 {
			t.Errorf("%d attempts; want 1: a wait over the cap is the caller's", n)
		}
	})
	t.Run("deadline before the next attempt", func(t *testing.T) {
		webhook.SetBackoffBase(t, 5*time.Second)
		rc := newReceiver(t, "", func(i int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
		c := build(t, rc.srv.URL)
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := sendCtx(ctx, t, c, `{"payload":1}`, "op-6", nil)
		wantCode(t, err, legate.CodeTransient)
		if d := time.Since(start); d > 400*time.Millisecond {
			t.Errorf("waited %v for a retry past the deadline", d)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		webhook.SetBackoffBase(t, 5*time.Second)
		rc := newReceiver(t, "", func(i int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
		c := build(t, rc.srv.URL)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := sendCtx(ctx, t, c, `{"payload":1}`, "op-7", nil)
		if err == nil || time.Since(start) > 2*time.Second {
			t.Errorf("error %v after %v", err, time.Since(start))
		}
	})
}

func TestSendRetriesNetworkErrors(t *testing.T) {
	webhook.SetBackoffBase(t, time.Millisecond)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close() // the connection drops before any answer
		}
	}))
	defer srv.Close()
	c := build(t, srv.URL)
	d, err := send(t, c, `{"payload":1}`, "op-8", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Attempts != 2 {
		t.Errorf("attempts %d; want 2", d.Attempts)
	}

	t.Run("per-attempt timeout", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer slow.Close()
		defer close(release)
		c := build(t, slow.URL, "timeout: 100ms", "max_attempts: 2")
		_, err := send(t, c, `{"payload":1}`, "op-9", nil)
		ce := wantCode(t, err, legate.CodeTimeout)
		if !strings.Contains(ce.Message, "after 2 attempts") {
			t.Errorf("message %q", ce.Message)
		}
	})
}

func TestSendPayloads(t *testing.T) {
	rc := newReceiver(t, "", nil)
	c := build(t, rc.srv.URL, "max_payload_bytes: 64")
	tests := map[string]struct {
		args string
		body string // "" means refused as INVALID_ARGUMENT
	}{
		"object":            {`{"payload":{"a":1}}`, `{"a":1}`},
		"array":             {`{"payload":[1,"two",null]}`, `[1,"two",null]`},
		"string":            {`{"payload":"hello"}`, `"hello"`},
		"number precision":  {`{"payload":12345678901234567890.50}`, `12345678901234567890.50`},
		"false":             {`{"payload":false}`, `false`},
		"zero":              {`{"payload":0}`, `0`},
		"unicode":           {`{"payload":{"name":"café ☕","esc":"\u00e9\n"}}`, `{"name":"café ☕","esc":"\u00e9\n"}`},
		"whitespace":        {"{\"payload\": { \"a\" :\n [ 1 , 2 ] } }", `{"a":[1,2]}`},
		"at the limit":      {`{"payload":"` + strings.Repeat("x", 62) + `"}`, `"` + strings.Repeat("x", 62) + `"`},
		"over the limit":    {`{"payload":"` + strings.Repeat("x", 63) + `"}`, ""},
		"null":              {`{"payload":null}`, ""},
		"missing":           {`{"event":"x"}`, ""},
		"bad event":         {`{"payload":1,"event":"bad event!"}`, ""},
		"event injection":   {`{"payload":1,"event":"a\r\nX-Evil: 1"}`, ""},
		"event too long":    {`{"payload":1,"event":"` + strings.Repeat("e", 129) + `"}`, ""},
		"event leading dot": {`{"payload":1,"event":".x"}`, ""},
		"unknown argument":  {`{"payload":1,"url":"http://evil.example"}`, ""},
		"event not string":  {`{"payload":1,"event":5}`, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := len(rc.attempts())
			_, err := send(t, c, tc.args, "op-p", nil)
			if tc.body == "" {
				wantCode(t, err, legate.CodeInvalidArgument)
				if len(rc.attempts()) != before {
					t.Error("a refused payload reached the receiver")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := rc.attempts()
			if b := string(got[len(got)-1].body); b != tc.body {
				t.Errorf("body %s; want %s", b, tc.body)
			}
		})
	}
}

func TestSendRefusesPrivateNetworks(t *testing.T) {
	l := connectortest.NewListener(t)
	// Built without Validate, which would refuse this url at start.
	cfg := &webhook.Config{URL: "http://" + l.Addr() + "/in", Timeout: legate.Duration(time.Second), MaxAttempts: 5, MaxPayloadBytes: 1024}
	c, err := webhook.New(connectors.Instance{ID: "hook"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = send(t, c, `{"payload":1}`, "op-10", nil)
	ce := wantCode(t, err, legate.CodePermissionDenied)
	if !strings.Contains(ce.Message, "allow_private_networks: true") {
		t.Errorf("message %q", ce.Message)
	}
	if time.Since(start) > 400*time.Millisecond {
		t.Error("a refused address was retried")
	}
	if err := c.Test(t.Context(), nil); err == nil {
		t.Error("Test reached a private address")
	}
	if n := l.Connections(t); n != 0 {
		t.Fatalf("listener accepted %d connection(s); want 0", n)
	}
}

// rate_limit spaces every attempt, retries included, and a delivery whose
// next turn comes after its deadline ends with RATE_LIMITED and the wait.
func TestSendRateLimited(t *testing.T) {
	webhook.SetBackoffBase(t, time.Millisecond)
	rc := newReceiver(t, "", func(i int, w http.ResponseWriter) {
		if i == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	c := build(t, rc.srv.URL, "rate_limit: {per_second: 10}")
	d, err := send(t, c, `{"payload":1}`, "op-rl-1", nil)
	if err != nil || d.Attempts != 2 {
		t.Fatalf("delivery %+v, %v", d, err)
	}
	if got := rc.attempts(); got[1].at.Sub(got[0].at) < 80*time.Millisecond {
		t.Errorf("retry sent %v after the first attempt; the rate allows one per 100ms", got[1].at.Sub(got[0].at))
	}

	slow := build(t, rc.srv.URL, "rate_limit: {per_second: 0.05}") // one per 20s
	if _, err := send(t, slow, `{"payload":2}`, "op-rl-2", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	before := len(rc.attempts())
	_, err = sendCtx(ctx, t, slow, `{"payload":3}`, "op-rl-3", nil)
	ce := wantCode(t, err, legate.CodeRateLimited)
	if ce.RetryAfter < 15*time.Second {
		t.Errorf("RetryAfter %v; want about 20s", ce.RetryAfter)
	}
	if len(rc.attempts()) != before {
		t.Error("a delivery past its rate reached the receiver")
	}
}
