package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/legate-mcp/legate"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// sendArgs are the arguments of the send tool.
type sendArgs struct {
	Payload any    `json:"payload" jsonschema:"The JSON value to deliver as the request body: an object, array, string, number or boolean (not null)"`
	Event   string `json:"event,omitempty" jsonschema:"Event name sent in the X-Legate-Event header, e.g. order.created: a letter or digit, then letters, digits and . _ : / -; at most 128 characters"`
}

// Delivery is the structured result of a successful send.
type Delivery struct {
	// DeliveryID is the X-Legate-Delivery id the receiver saw.
	DeliveryID string `json:"delivery_id"`
	// Status is the receiver's final (2xx) status.
	Status int `json:"status"`
	// Attempts is how many attempts the delivery took.
	Attempts int `json:"attempts"`
}

// MaxRetryWait caps the wait between attempts. A Retry-After longer than
// it ends the delivery with RATE_LIMITED (or TRANSIENT) carrying the wait,
// rather than holding the call.
const MaxRetryWait = 30 * time.Second

// backoffBase is the first backoff; each retry doubles it, with jitter.
// Tests shorten it (export_test.go).
var backoffBase = 500 * time.Millisecond

var eventName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

func (c *Connector) sendTool() connectors.Tool {
	desc := fmt.Sprintf("POST a JSON payload to this connector's fixed webhook URL. Retried up to %d attempts on 429, 5xx "+
		"and network errors, always with the same X-Legate-Delivery id, which receivers dedupe on; signed with "+
		"X-Legate-Signature when a signing secret is configured. Returns the delivery id, the final status and the "+
		"number of attempts.", c.cfg.MaxAttempts)
	return connectors.NewTool("send", desc, legate.ClassWrite, c.send)
}

func (c *Connector) send(ctx context.Context, call *connectors.Call, in *sendArgs) (*legate.Result, error) {
	raw := rawArg(call.Args, "payload")
	if raw == nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "webhook: payload is required and may not be null")
	}
	var body bytes.Buffer
	if err := json.Compact(&body, raw); err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "webhook: payload: %v", err)
	}
	if body.Len() > c.cfg.MaxPayloadBytes {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "webhook: payload is %d bytes, over max_payload_bytes (%d)", body.Len(), c.cfg.MaxPayloadBytes)
	}
	if in.Event != "" && !eventName.MatchString(in.Event) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "webhook: event %q: use a letter or digit, then letters, digits and . _ : / -, at most 128 characters", in.Event)
	}
	u, err := parseURL(c.cfg.URL)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "webhook: url %v", err)
	}
	secret, err := credential(ctx, call.Credentials, "signing_secret")
	if err != nil {
		return nil, err
	}
	token, err := credential(ctx, call.Credentials, "token")
	if err != nil {
		return nil, err
	}
	d := &delivery{c: c, call: call, url: u, id: deliveryID(call.OperationID), event: in.Event, body: body.Bytes(), secret: secret, token: token}
	d.secrets = legate.NewSecrets(secret, token)
	return d.run(ctx)
}

// delivery is one call of send: one id, one or more attempts.
type delivery struct {
	c             *Connector
	call          *connectors.Call
	url           *url.URL
	id, event     string
	body          []byte
	secret, token string
	secrets       *legate.Secrets // secret and token, in every form a receiver may echo them
}

// outcome is what one attempt got.
type outcome struct {
	status        int
	header        http.Header
	snippet       string
	err           error
	retryAfter    time.Duration
	hasRetryAfter bool
}

func (d *delivery) run(ctx context.Context) (*legate.Result, error) {
	for attempt := 1; ; attempt++ {
		o := d.attempt(ctx)
		if o.err == nil && o.status >= 200 && o.status < 300 {
			return &legate.Result{Structured: &Delivery{DeliveryID: d.id, Status: o.status, Attempts: attempt}}, nil
		}
		fail := d.failure(ctx, o, attempt)
		if attempt >= d.c.cfg.MaxAttempts || !retryable(ctx, o) {
			return nil, fail
		}
		wait := backoff(attempt)
		if o.hasRetryAfter {
			if o.retryAfter > MaxRetryWait {
				return nil, fail
			}
			wait = o.retryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fail
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, d.failure(ctx, outcome{err: ctx.Err()}, attempt)
		case <-timer.C:
		}
		reason := "network"
		if o.err == nil {
			reason = fmt.Sprint(o.status)
		}
		d.call.Retry(reason)
	}
}

// attempt sends the delivery once, signed at the time of sending.
func (d *delivery) attempt(ctx context.Context) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url.String(), bytes.NewReader(d.body))
	if err != nil {
		return outcome{err: err}
	}
	d.c.setHeaders(req.Header, d.token)
	req.Header.Set(DeliveryHeader, d.id)
	if d.event != "" {
		req.Header.Set(EventHeader, d.event)
	}
	if d.secret != "" {
		req.Header.Set(SignatureHeader, Sign(d.secret, time.Now(), d.body))
	}
	resp, err := d.c.client.Do(req)
	if err != nil {
		return outcome{err: err}
	}
	defer drain(resp)
	o := outcome{status: resp.StatusCode, header: resp.Header}
	// A compressed answer is decoded first, so that it is masked; one in a
	// coding that cannot be decoded gives no excerpt.
	if resp.StatusCode >= 300 && connectors.DecodeBody(resp) == nil {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, snippetLimit+1))
		truncated := len(head) > snippetLimit
		head = head[:min(len(head), snippetLimit)]
		// Masked before anything else, while a secret cut at the limit is
		// still at the very end.
		o.snippet = snippet(d.secrets.Mask(head, truncated))
	}
	o.retryAfter, o.hasRetryAfter = netguard.RetryAfter(resp.Header, time.Now())
	return o
}

// setHeaders sets the headers every request of the instance carries,
// before the X-Legate-* ones: Content-Type (which headers may override),
// User-Agent, the configured headers and the bearer token.
func (c *Connector) setHeaders(h http.Header, token string) {
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Legate-Webhook")
	for k, v := range c.cfg.Headers {
		h.Set(k, v)
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
}

// retryable: 408, 425, 429 and 5xx other than 501 and 505, and network
// failures other than a refused address or the call's own end.
func retryable(ctx context.Context, o outcome) bool {
	if o.err != nil {
		return ctx.Err() == nil && !errors.Is(o.err, netguard.ErrBlocked)
	}
	switch s := o.status; {
	case s == http.StatusRequestTimeout, s == http.StatusTooEarly, s == http.StatusTooManyRequests:
		return true
	case s == http.StatusNotImplemented, s == http.StatusHTTPVersionNotSupported:
		return false
	case s >= 500:
		return true
	}
	return false
}

// backoff is the wait before attempt+1: backoffBase doubled per attempt,
// capped at MaxRetryWait, with jitter over its upper half.
func backoff(attempt int) time.Duration {
	d := MaxRetryWait
	if attempt < 16 {
		d = min(backoffBase<<(attempt-1), MaxRetryWait)
	}
	return d/2 + mrand.N(d/2+1)
}

// failure maps the last outcome of a delivery to a canonical error naming
// the delivery and its attempts. It never includes the URL, which may
// itself be a secret (many webhook URLs are).
func (d *delivery) failure(ctx context.Context, o outcome, attempts int) *legate.Error {
	prefix := fmt.Sprintf("webhook: delivery %s", d.id)
	after := fmt.Sprintf("after %d attempt", attempts)
	if attempts > 1 {
		after += "s"
	}
	if o.err != nil {
		return transportError(ctx, o.err, prefix, attempts)
	}
	status := o.status
	msg := fmt.Sprintf("%s: receiver answered %d %s %s", prefix, status, http.StatusText(status), after)
	if o.snippet != "" {
		msg += ": " + o.snippet
	}
	e := &legate.Error{Message: msg}
	switch {
	case status < 400:
		e.Code = legate.CodeAdapterMapping
		e.Message += "; deliveries do not follow redirects: set url to the final address"
	case status == http.StatusUnauthorized:
		e.Code = legate.CodeAuthExpired
	case status == http.StatusForbidden:
		e.Code = legate.CodePermissionDenied
	case status == http.StatusNotFound || status == http.StatusGone:
		e.Code = legate.CodeNotFound
	case status == http.StatusConflict || status == http.StatusPreconditionFailed:
		e.Code = legate.CodeConflict
	case status == http.StatusTooManyRequests:
		e.Code = legate.CodeRateLimited
		e.RetryAfter = o.retryAfter
	case status == http.StatusRequestTimeout || status == http.StatusTooEarly || status >= 500:
		e.Code = legate.CodeTransient
	default:
		e.Code = legate.CodeInvalidArgument
	}
	return e
}

// transportError maps a failure to get an answer; prefix names the
// delivery. The *url.Error's URL is left out of the message.
func transportError(ctx context.Context, err error, prefix string, attempts int) *legate.Error {
	if prefix == "" {
		prefix = "webhook"
	}
	var ue *url.Error
	inner := err
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	after := ""
	if attempts > 1 {
		after = fmt.Sprintf(" after %d attempts", attempts)
	}
	var ne net.Error
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return &legate.Error{Code: legate.CodePermissionDenied, Message: prefix + ": " + inner.Error(), Err: err}
	case errors.Is(ctx.Err(), context.Canceled):
		return &legate.Error{Code: legate.CodeTransient, Message: prefix + ": cancelled" + after, Err: err}
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &legate.Error{Code: legate.CodeTimeout, Message: prefix + ": timed out" + after, Err: err}
	}
	return &legate.Error{Code: legate.CodeTransient, Message: prefix + ": request failed" + after + ": " + inner.Error(), Err: err}
}

// snippetLimit is how much of a receiver's error answer is kept.
const snippetLimit = 512

// snippet is a one-line excerpt of a receiver's answer, when it is text.
func snippet(b []byte) string {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ { // a rune cut at the read limit
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				b = b[:len(b)-i]
			}
			break
		}
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return ""
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// deliveryID is the call's OperationID, so that a retry by the gateway
// keeps the id; one that is not header-safe is hashed, and a call without
// one gets a random UUID.
func deliveryID(op string) string {
	if op == "" {
		var b [16]byte
		rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		h := hex.EncodeToString(b[:])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	if opIDSafe.MatchString(op) {
		return op
	}
	sum := sha256.Sum256([]byte(op))
	return "op-" + hex.EncodeToString(sum[:16])
}

var opIDSafe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// rawArg returns an argument's JSON text as the client sent it (numbers
// keep their precision), or nil when it is absent or null.
func rawArg(args json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil
	}
	v := bytes.TrimSpace(m[name])
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil
	}
	return v
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
