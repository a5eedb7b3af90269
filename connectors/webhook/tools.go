package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
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

var eventName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`) })

func (c *Connector) sendTool() connectors.Tool {
	desc := fmt.Sprintf("Notify the system behind this connector's fixed webhook URL (a CI server, a chat, an automation) of an event: "+
		"POSTs a JSON payload. Retried up to %d attempts on 429, 5xx "+
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
	if in.Event != "" && !eventName().MatchString(in.Event) {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "webhook: event %q: use a letter or digit, then letters, digits and . _ : / -, at most 128 characters", in.Event)
	}
	u, err := netguard.ParseURL(c.cfg.URL)
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

// run sends the delivery until a 2xx answer or a failure not worth another
// attempt. Its id is an idempotency key the receiver dedupes on, so every
// failure that may pass is retried, a POST whose answer was lost included.
func (d *delivery) run(ctx context.Context) (*legate.Result, error) {
	retry := httpkit.Retry{
		MaxAttempts: d.c.cfg.MaxAttempts,
		Base:        backoffBase,
		MaxWait:     MaxRetryWait,
		KeyHeader:   DeliveryHeader,
		Limiter:     d.c.limiter,
		OnRetry:     d.call.Retry,
	}
	resp, attempts, err := retry.Do(ctx, d.c.client, d.request)
	if err != nil {
		return nil, httpkit.TransportError(ctx, err, d.prefix(attempts, " after "))
	}
	defer httpkit.Drain(resp)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil, d.failure(resp, attempts)
	}
	return &legate.Result{Structured: &Delivery{DeliveryID: d.id, Status: resp.StatusCode, Attempts: attempts}}, nil
}

// request is one attempt's request, signed at the time of sending.
func (d *delivery) request(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url.String(), bytes.NewReader(d.body))
	if err != nil {
		return nil, err
	}
	d.c.setHeaders(req.Header, d.token)
	req.Header.Set(DeliveryHeader, d.id)
	if d.event != "" {
		req.Header.Set(EventHeader, d.event)
	}
	if d.secret != "" {
		req.Header.Set(SignatureHeader, Sign(d.secret, time.Now(), d.body))
	}
	return req, nil
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

// prefix names the delivery, and its attempts when there were several,
// joined by sep.
func (d *delivery) prefix(attempts int, sep string) string {
	p := "webhook: delivery " + d.id
	if attempts > 1 {
		p += fmt.Sprintf("%safter %d attempts", sep, attempts)
	}
	return p
}

// failure is the canonical error of the last answer of a delivery, naming
// the delivery and its attempts and quoting the receiver, masked. It never
// includes the URL, which may itself be a secret (many webhook URLs are).
func (d *delivery) failure(resp *http.Response, attempts int) *legate.Error {
	status := resp.StatusCode
	after := fmt.Sprintf("after %d attempt", attempts)
	if attempts > 1 {
		after += "s"
	}
	msg := fmt.Sprintf("webhook: delivery %s: receiver answered %d %s %s", d.id, status, http.StatusText(status), after)
	if s := httpkit.Snippet(resp, d.secrets); s != "" {
		msg += ": " + s
	}
	if status < 400 {
		msg += "; deliveries do not follow redirects: set url to the final address"
	}
	return httpkit.StatusError(resp, msg)
}

// deliveryID is the call's OperationID, so that a retry by the gateway
// keeps the id; one that is not header-safe is hashed, and a call without
// one gets a random UUID.
func deliveryID(op string) string {
	if op == "" {
		return uuid.NewString()
	}
	if opIDSafe().MatchString(op) {
		return op
	}
	sum := sha256.Sum256([]byte(op))
	return "op-" + hex.EncodeToString(sum[:16])
}

var opIDSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`) })

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
