// Package hooks receives the webhook deliveries of the providers behind
// native connector instances (Slack, GitHub, Stripe, Notion) at
// POST /hooks/{instance}, and serves the events to MCP clients.
//
// A delivery is checked in this order: the instance must exist, be of a
// type that receives webhooks and declare the type's webhook credential
// (webhook_secret; Notion's webhook_verification_token), else 404 with
// nothing said of which; the body is bounded (413 past MaxBody); the
// provider's signature is verified with the credential's value (and its
// timestamp, for Slack and Stripe, within Tolerance), else 401, counted
// by instance and reason; the delivery is read into a normalised event
// (the event.v1 shape of Event) and stored once per provider event id: a
// delivery of an event already stored (a provider's retry) is answered 200
// and stored nothing. A provider's set-up request (Slack's
// url_verification, Notion's verification request) is answered instead.
//
// The signature is the authentication: the route sits outside the MCP
// authentication and the browser Origin checks, which a provider's
// servers do not pass.
//
// Clients read the events through the instance's tool
// {instance}.events_list (Tools), a read tool that takes the call path
// like any, and the resource legate://events/{instance} (Middleware,
// Subscribe), whose subscribers are told notifications/resources/updated
// of each new event, on every replica of a shared store (Run).
package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
)

// Bounds of a delivery.
const (
	// MaxBody bounds a delivery's body; a longer one is refused with 413.
	MaxBody = 5 << 20
	// MaxPayload bounds the body kept with an event; past it the payload
	// is cut and the event says so (truncated).
	MaxPayload = 64 << 10
	// Retention is how long events are kept.
	Retention = 30 * 24 * time.Hour
)

// Instance is a connector instance as hooks sees it.
type Instance struct {
	ID, Type, Tenant string
	// Credentials resolve the instance's credentials (its tenant's).
	Credentials connectors.Credentials
}

// Options configure Hooks.
type Options struct {
	// Events keeps the events; required.
	Events store.EventStore
	// Instance finds a connector instance by id; required.
	Instance func(id string) (Instance, bool)
	// View is the catalog a caller sees (nil principal: no
	// authentication); an instance's events are the caller's when its
	// view holds the instance's events tool. Required.
	View func(p *auth.Principal) *catalog.Catalog
	// Server is the MCP server whose subscribers are told of new events
	// (nil, or a nil result: nobody is).
	Server func() *mcp.Server
	// Register adds the metrics to the gateway's registry; nil keeps them
	// unregistered.
	Register func(...prometheus.Collector)
	// StateDir is where a Notion verification token is kept for the
	// operator when the instance's credential cannot be read yet.
	StateDir string
	// Log receives what cannot reach a caller; nil discards it.
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Hooks receives deliveries and serves their events. Build it with New.
type Hooks struct {
	o        Options
	refused  *prometheus.CounterVec
	received *prometheus.CounterVec

	mu         sync.Mutex
	subscribed map[string]bool // the instances whose events were ever subscribed to here
}

// New returns the receiver of o.
func New(o Options) *Hooks {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	h := &Hooks{o: o, subscribed: map[string]bool{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "legate_webhook_refused_total",
			Help: "Webhook deliveries refused, by connector instance and reason (bad_signature, stale_timestamp, malformed)."}, []string{"instance", "reason"}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "legate_webhook_deliveries_total",
			Help: "Webhook deliveries accepted, by connector instance and outcome (stored, duplicate, answered: a set-up request)."}, []string{"instance", "outcome"}),
	}
	if o.Register != nil {
		o.Register(h.refused, h.received)
	}
	return h
}

// Refused is the counter of refused deliveries, for tests.
func (h *Hooks) Refused() *prometheus.CounterVec { return h.refused }

// ServeHTTP receives one delivery at /hooks/{instance}.
func (h *Hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	in, p, ok := h.receiver(r.PathValue("instance"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	d := &delivery{header: r.Header, body: body, now: h.o.Now()}
	secret, secretErr := in.Credentials.Get(ctx, p.credential)
	if p.handshake != nil {
		a, isHandshake, err := p.handshake(d, secret)
		if isHandshake {
			if err == nil && secretErr != nil {
				h.keepToken(in, body)
			}
			h.finish(w, in, nil, a, err)
			return
		}
	}
	if secretErr != nil {
		h.o.Log.Warn("webhook: the instance's secret cannot be read", "instance", in.ID, "credential", p.credential, "error", secretErr)
		http.Error(w, "the receiver is not ready", http.StatusServiceUnavailable)
		return
	}
	if err := p.verify(d, secret); err != nil {
		h.finish(w, in, nil, nil, err)
		return
	}
	ev, a, err := p.read(d)
	h.finish(w, in, ev, a, err)
}

// receiver finds a receiving instance and its provider.
func (h *Hooks) receiver(id string) (Instance, provider, bool) {
	in, ok := h.o.Instance(id)
	if !ok {
		return Instance{}, provider{}, false
	}
	p, ok := providers[in.Type]
	if !ok || in.Credentials == nil || !in.Credentials.Has(p.credential) {
		return Instance{}, provider{}, false
	}
	return in, p, true
}

// finish answers a delivery: refused (err), a set-up request answered
// (a), or its event stored.
func (h *Hooks) finish(w http.ResponseWriter, in Instance, ev *store.Event, a *answer, err error) {
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		h.refused.WithLabelValues(in.ID, ref.reason).Inc()
		h.o.Log.Info("webhook: delivery refused", "instance", in.ID, "reason", ref.reason, "error", ref.err)
		status := http.StatusUnauthorized
		if ref.reason == ReasonMalformed {
			status = http.StatusBadRequest
		}
		http.Error(w, ref.reason, status)
		return
	case err != nil:
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	case a != nil:
		h.received.WithLabelValues(in.ID, "answered").Inc()
		writeJSON(w, a.body)
		return
	}
	ev.Instance, ev.Tenant, ev.Provider, ev.Received = in.ID, in.Tenant, in.Type, h.o.Now()
	if len(ev.Payload) > MaxPayload {
		ev.Payload, ev.Truncated = ev.Payload[:MaxPayload], true
	}
	// Not the request's context: a provider giving up must not leave the
	// event half stored and its retry answered as a duplicate.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, added, err := h.o.Events.Add(ctx, *ev)
	if err != nil {
		h.o.Log.Error("webhook: storing an event", "instance", in.ID, "error", err)
		http.Error(w, "storing the event", http.StatusInternalServerError)
		return
	}
	outcome := "duplicate"
	if added {
		outcome = "stored"
		if _, watched := h.o.Events.(store.EventWatcher); !watched {
			h.updated(ctx, in.ID) // else Run hears of it as every replica does
		}
	}
	h.received.WithLabelValues(in.ID, outcome).Inc()
	writeJSON(w, map[string]any{"ok": true, "duplicate": !added})
}

// keepToken keeps the token of a Notion verification request that came
// before the instance's credential could be read, in a file only the
// process's user reads, for the operator to paste into Notion and to
// point the credential at ({file: PATH}). The log says where, never what.
func (h *Hooks) keepToken(in Instance, body []byte) {
	if h.o.StateDir == "" {
		h.o.Log.Warn("webhook: a Notion verification request came before the instance's webhook_verification_token could be read, and there is no state directory to keep its token in", "instance", in.ID)
		return
	}
	var m struct {
		Token string `json:"verification_token"`
	}
	_ = json.Unmarshal(body, &m)
	dir := filepath.Join(h.o.StateDir, "hooks")
	file := filepath.Join(dir, in.ID+".verification_token")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		h.o.Log.Error("webhook: keeping a Notion verification token", "instance", in.ID, "error", err)
		return
	}
	// Never over a token kept already: a request forging one after
	// Notion's would otherwise replace it. One forged before Notion's
	// fails Notion's Verify form; the operator then deletes the file and
	// has Notion send its token again.
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.WriteString(m.Token)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		h.o.Log.Error("webhook: keeping a Notion verification token", "instance", in.ID, "path", file, "error", err)
		return
	}
	h.o.Log.Warn("webhook: Notion's verification token is kept in a file: paste it into the subscription's Verify form, and set the instance's webhook_verification_token credential to {file: PATH}",
		"instance", in.ID, "path", file)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

var _ http.Handler = (*Hooks)(nil)
