package telemetry_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/telemetry"
	"github.com/legate-mcp/legate/telemetry/spans"
)

type okTransport struct{ resp *http.Response }

func (t okTransport) RoundTrip(*http.Request) (*http.Response, error) { return t.resp, nil }

// With tracing off (no tracer made), nothing on the call path allocates:
// the nil tracer's methods, the steps, events and the transport wrapper.
func TestOffAllocatesNothing(t *testing.T) {
	var tr *telemetry.Tracer
	ctx := context.Background()
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	rt := spans.Transport(okTransport{&http.Response{StatusCode: 200}})
	start := time.Now()
	allocs := testing.AllocsPerRun(100, func() {
		c := tr.StartCall(tr.Extract(ctx, req.Header), "mcp.up.echo", "local", "", start)
		if tr.Request(req) != req {
			t.Fatal("Request made a new request with tracing off")
		}
		c, step := spans.Step(c, "execute")
		spans.Event(c, "policy.decision", "action", "allow")
		if _, err := rt.RoundTrip(req.WithContext(c)); err != nil {
			t.Fatal(err)
		}
		step.End()
		tr.EndCall(c, "ok", "source", "upstream:up")
	})
	// req.WithContext is the test's own allocation.
	if allocs > 1 {
		t.Fatalf("%v allocations per call with tracing off, want none but the test's own", allocs)
	}
}

func TestNewIsOffWithoutAnEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := telemetry.New(context.Background(), telemetry.Config{SampleRatio: 1}, "v")
	if tr != nil || err != nil {
		t.Fatalf("New without an endpoint = %v, %v; want nil, nil", tr, err)
	}
}

func TestNewFromTheEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	tr, err := telemetry.New(context.Background(), telemetry.Config{SampleRatio: 1}, "v")
	if tr == nil || err != nil {
		t.Fatalf("New with $OTEL_EXPORTER_OTLP_ENDPOINT = %v, %v; want a tracer", tr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	tr.Shutdown(ctx) // no span to send: no connection
}

func TestConfigValidate(t *testing.T) {
	cases := map[string]struct {
		c    telemetry.Config
		want string
	}{
		"off":           {telemetry.Config{SampleRatio: 1}, ""},
		"http":          {telemetry.Config{OTLPEndpoint: "http://collector:4318", SampleRatio: 0.5}, ""},
		"no scheme":     {telemetry.Config{OTLPEndpoint: "collector:4318"}, "telemetry.otlp_endpoint: want an http"},
		"ratio above 1": {telemetry.Config{SampleRatio: 2}, "telemetry.sample_ratio: 2 is more than 1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			errs := c.c.Validate("telemetry")
			switch {
			case c.want == "" && len(errs) > 0:
				t.Fatalf("errors %v", errs)
			case c.want != "" && (len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), c.want)):
				t.Fatalf("errors %v, want one starting %q", errs, c.want)
			}
		})
	}
}

// BenchmarkOff is what tracing adds to one call when it is off: the
// tracer's hooks in the call path and the transport wrapper's check.
func BenchmarkOff(b *testing.B) {
	var tr *telemetry.Tracer
	ctx := context.Background()
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	rt := spans.Transport(okTransport{&http.Response{StatusCode: 200}})
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		c := tr.StartCall(ctx, "mcp.up.echo", "local", "", start)
		spans.Event(c, "policy.decision", "action", "allow")
		c, step := spans.Step(c, "execute")
		rt.RoundTrip(req)
		step.End()
		tr.EndCall(c, "ok", "source", "upstream:up")
	}
}
