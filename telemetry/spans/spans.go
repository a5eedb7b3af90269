// Package spans is the part of tracing the call path and the HTTP clients
// use: a call's child spans and events, and the transport that carries W3C
// trace context. It depends on the OpenTelemetry API alone; package
// telemetry makes the tracer and exports the spans. With no tracer live
// (Live), every function returns at once and allocates nothing.
package spans

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Span is a step's span; its zero value, what Step returns with tracing
// off, does nothing.
type Span struct{ s trace.Span }

// End ends the step.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// Scope names Legate's tracer.
const Scope = "github.com/legate-mcp/legate"

// live counts the tracers not shut down: the functions here do nothing
// while it is 0.
var live atomic.Int32

// Live counts a tracer made (+1) or shut down (-1).
func Live(delta int32) { live.Add(delta) }

// propagator reads and writes W3C traceparent and tracestate headers.
var propagator = propagation.TraceContext{}

// active returns the recording span of ctx, nil when tracing is off or
// the call is not sampled.
func active(ctx context.Context) trace.Span {
	if live.Load() == 0 {
		return nil
	}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		return sp
	}
	return nil
}

// Step starts a child span of the call in ctx, name being the step
// ("execute", "approval.wait"), and returns ctx carrying it.
func Step(ctx context.Context, name string) (context.Context, Span) {
	parent := active(ctx)
	if parent == nil {
		return ctx, Span{}
	}
	ctx, sp := parent.TracerProvider().Tracer(Scope).Start(ctx, name)
	return ctx, Span{sp}
}

// Event adds an event to the span in ctx, with attributes as key, value
// pairs, each key taking the prefix "legate.".
func Event(ctx context.Context, name string, kv ...string) {
	sp := active(ctx)
	if sp == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, attribute.String("legate."+kv[i], kv[i+1]))
	}
	sp.AddEvent(name, trace.WithAttributes(attrs...))
}

// Set sets attributes on the span in ctx, as key, value pairs, each key
// taking the prefix "legate.".
func Set(ctx context.Context, kv ...string) {
	sp := active(ctx)
	if sp == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, attribute.String("legate."+kv[i], kv[i+1]))
	}
	sp.SetAttributes(attrs...)
}

// Items sets legate.items on the span in ctx to the number of items of a
// connector's result that counts them (a page of a list: Count() int).
func Items(ctx context.Context, result any) {
	if c, ok := result.(interface{ Count() int }); ok {
		if sp := active(ctx); sp != nil {
			sp.SetAttributes(attribute.Int("legate.items", c.Count()))
		}
	}
}

// requestIDHeaders are the headers providers name their request by: a
// support ticket quotes it.
var requestIDHeaders = []string{"X-Request-Id", "X-Github-Request-Id", "Request-Id", "X-Slack-Req-Id", "X-Notion-Request-Id", "X-Goog-Request-Id", "X-Amzn-Requestid"}

// Transport wraps base so that each request made within a traced call is
// a client span of its own ("HTTP POST", with the provider's request id
// when its answer names one: legate.provider_request_id) and carries that
// span's W3C traceparent header to the server. A request outside a traced call goes
// to base untouched.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	parent := active(r.Context())
	if parent == nil {
		return t.base.RoundTrip(r)
	}
	ctx, sp := parent.TracerProvider().Tracer(Scope).Start(r.Context(), "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("server.address", r.URL.Hostname())))
	defer sp.End()
	// A RoundTripper must not change the caller's request.
	r = r.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(r.Header))
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		sp.SetStatus(codes.Error, "no answer")
		return nil, err
	}
	sp.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	for _, h := range requestIDHeaders {
		if v := resp.Header.Get(h); v != "" && len(v) <= 200 {
			sp.SetAttributes(attribute.String("legate.provider_request_id", v))
			break
		}
	}
	if resp.StatusCode >= 500 {
		sp.SetStatus(codes.Error, "HTTP "+strconv.Itoa(resp.StatusCode))
	}
	return resp, nil
}

// Unwrap returns the wrapped transport, for code that looks for the
// *http.Transport beneath (netguard's tests, http.Client's CloseIdleConnections).
func (t *transport) Unwrap() http.RoundTripper { return t.base }

// CloseIdleConnections closes the idle connections of the transport beneath.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

var _ http.RoundTripper = (*transport)(nil)
