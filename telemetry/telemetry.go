// Package telemetry traces calls with OpenTelemetry: one span per tool
// call, its steps as child spans and events, and W3C trace context carried
// to upstreams and providers. It is off unless an OTLP endpoint is
// configured (`telemetry.otlp_endpoint`, or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and
// then exports over OTLP/HTTP (protobuf).
//
//	tr, err := telemetry.New(ctx, cfg.Telemetry, version)      // nil when off
//	ctx = tr.Extract(ctx, req.Header)                          // a caller's traceparent
//	ctx = tr.StartCall(ctx, tool, principal, tenant, start)    // the call's span
//	ctx, step := spans.Step(ctx, "execute")                    // a child span
//	step.End()
//	tr.EndCall(ctx, "ok", "source", "native:slack")
//	client := &http.Client{Transport: spans.Transport(base)}
//
// When off, a nil *Tracer's methods return at once and package spans's
// functions check one atomic counter of live tracers before anything else:
// no span is created and nothing is allocated on the call path.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/legate-mcp/legate/telemetry/spans"
)

// Config is the `telemetry:` section of config.yaml.
type Config struct {
	OTLPEndpoint string  `yaml:"otlp_endpoint" example:"http://otel-collector:4318" desc:"Base URL of an OTLP/HTTP receiver (spans go to its /v1/traces): traces are on when it or $OTEL_EXPORTER_OTLP_ENDPOINT is set, off otherwise"`
	SampleRatio  float64 `yaml:"sample_ratio" default:"1" min:"0" desc:"Share of calls traced, from 0 to 1, when the caller sent no sampled traceparent (a caller's sampling decision is kept)"`
}

// Validate checks c without I/O; each error starts with its key under path.
func (c Config) Validate(path string) []error {
	var errs []error
	if c.OTLPEndpoint != "" {
		if u, err := url.Parse(c.OTLPEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s.otlp_endpoint: want an http:// or https:// URL, e.g. http://otel-collector:4318", path))
		}
	}
	if c.SampleRatio > 1 {
		errs = append(errs, fmt.Errorf("%s.sample_ratio: %v is more than 1", path, c.SampleRatio))
	}
	return errs
}

// Tracer makes the spans of calls and exports them. A nil *Tracer is
// tracing off: every method returns at once.
type Tracer struct {
	tp *sdktrace.TracerProvider
	tr trace.Tracer
}

// enabled reports whether c or the environment names an endpoint.
func enabled(c Config) bool {
	return c.OTLPEndpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// New returns the tracer c configures, or nil when tracing is off. It makes
// no connection: spans are sent in batches once calls end. version is
// reported as service.version.
func New(ctx context.Context, c Config, version string) (*Tracer, error) {
	if !enabled(c) {
		return nil, nil
	}
	if errs := c.Validate("telemetry"); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var opts []otlptracehttp.Option
	if c.OTLPEndpoint != "" {
		// Like $OTEL_EXPORTER_OTLP_ENDPOINT, a base URL: spans go to its /v1/traces.
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(c.OTLPEndpoint, "/")+"/v1/traces"))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if version == "" {
		version = "dev"
	}
	res := resource.NewSchemaless(attribute.String("service.name", "legate"), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SampleRatio))),
	)
	spans.Live(1)
	return &Tracer{tp: tp, tr: tp.Tracer(spans.Scope)}, nil
}

// ShutdownTimeout bounds Shutdown: a receiver that is down cannot hold
// the gateway's stop for the exporter's minute of retries.
const ShutdownTimeout = 5 * time.Second

// Shutdown sends the spans not sent yet, within ctx and ShutdownTimeout,
// and stops the tracer.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	spans.Live(-1)
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	return t.tp.Shutdown(ctx)
}

// Extract returns ctx carrying the remote span context of a caller's
// traceparent header, if h has a valid one: the call's span becomes its
// child.
func (t *Tracer) Extract(ctx context.Context, h http.Header) context.Context {
	if t == nil || len(h["Traceparent"]) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
}

// Request is r with its context carrying the remote span context of its
// traceparent header (see Extract); r itself when there is none or
// tracing is off.
func (t *Tracer) Request(r *http.Request) *http.Request {
	if t == nil || len(r.Header["Traceparent"]) == 0 {
		return r
	}
	return r.WithContext(t.Extract(r.Context(), r.Header))
}

// StartCall starts the span of one call to tool, which entered the gateway
// at start, and returns ctx carrying it. Authentication and the caller's
// view of the catalog were resolved before: they are the span's first
// events, auth with the principal and tenant, view with the tool found.
func (t *Tracer) StartCall(ctx context.Context, tool, principal, tenant string, start time.Time) context.Context {
	if t == nil {
		return ctx
	}
	ctx, sp := t.tr.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", tool)))
	if sp.IsRecording() {
		sp.AddEvent("auth", trace.WithTimestamp(start), trace.WithAttributes(attribute.String("legate.principal", principal), attribute.String("legate.tenant", tenant)))
		sp.AddEvent("view", trace.WithTimestamp(start), trace.WithAttributes(attribute.String("legate.tool", tool)))
	}
	return ctx
}

// HandedBack is the outcome of a call the HTTP fast path handed to the
// SDK's path (it needs approval): that path's run of the call has a span
// of its own.
const HandedBack = "handed_back"

// EndCall ends the call's span in ctx with its outcome ("ok", HandedBack,
// or an error code, which sets the span's status to error) and attributes as key,
// value pairs, each key taking the prefix "legate.". The call's audit row
// is queued then: an event "audit" marks it.
func (t *Tracer) EndCall(ctx context.Context, outcome string, kv ...string) {
	if t == nil {
		return
	}
	sp := trace.SpanFromContext(ctx)
	if !sp.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, len(kv)/2+1)
	attrs = append(attrs, attribute.String("legate.outcome", outcome))
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			attrs = append(attrs, attribute.String("legate."+kv[i], kv[i+1]))
		}
	}
	sp.SetAttributes(attrs...)
	if outcome != "ok" && outcome != HandedBack {
		sp.SetStatus(codes.Error, outcome)
	}
	sp.AddEvent("audit")
	sp.End()
}
