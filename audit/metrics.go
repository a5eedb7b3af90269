package audit

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sources are what the metrics read at scrape time, under the scrape
// request's context so a slow store cannot hold a scrape past its client.
type Sources interface {
	// PendingApprovals counts the approval requests waiting for a decision.
	PendingApprovals(ctx context.Context) (int, error)
	// CatalogSize is the number of tools in the catalog.
	CatalogSize() int
	// UpstreamStatus reports each upstream's circuit, health and tools.
	UpstreamStatus(ctx context.Context) ([]UpstreamStatus, error)
}

// UpstreamStatus is what `legate upstream list` shows of one upstream
// (upstream.Status), and what the metrics read of it at scrape time: audit
// defines it so that it depends on no package above it.
type UpstreamStatus struct {
	ID        string `json:"id"`
	Transport string `json:"transport"`
	Origin    string `json:"origin"`
	Circuit   string `json:"circuit"`
	Sessions  int    `json:"sessions"`
	Tools     int    `json:"tools"`
	// Quarantined counts the tools held back until an admin accepts them.
	Quarantined int       `json:"quarantined"`
	RefreshedAt time.Time `json:"refreshed_at,omitzero"`
	CheckedAt   time.Time `json:"checked_at,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// SharedURIs are resource URIs this upstream offers that another
	// upstream offers too; a read goes to the first by id.
	SharedURIs []string `json:"shared_uris,omitempty"`
}

// Metrics are the gateway's Prometheus series, on a registry of their own.
// The counters are incremented by the call path; the gauges read Sources
// at scrape time.
type Metrics struct {
	// Calls counts tool calls by canonical tool, source and outcome.
	Calls *prometheus.CounterVec
	// Latency is the latency of calls by tool and source; observe it with
	// ObserveLatency, which bounds the tool label.
	Latency *prometheus.HistogramVec
	// Decisions counts policy decisions by action.
	Decisions *prometheus.CounterVec
	// Decided is the time from an approval request to its decision.
	Decided prometheus.Histogram
	// Limited counts calls that ended RATE_LIMITED, by tool.
	Limited *prometheus.CounterVec
	// OverBudget counts calls refused QUOTA_EXCEEDED, by the budget's
	// scope (principal, tenant) and kind (calls, result_bytes, writes).
	OverBudget *prometheus.CounterVec
	// Retries counts connectors' retries, by tool (Retried).
	Retries *prometheus.CounterVec
	// Throttled counts the answers of providers that throttled a native
	// call, retried or final, by tool (Retried, NativeEnded).
	Throttled *prometheus.CounterVec
	// DuplicatesPrevented counts writes not made again because their
	// idempotency key's record showed them done, by instance.
	DuplicatesPrevented *prometheus.CounterVec
	// BackgroundErrors counts the errors of work no caller waits for, by
	// operation (heartbeat, expire, recover, list_approved, run_approved).
	BackgroundErrors *prometheus.CounterVec
	// ViewCacheHits and ViewCacheEvictions count the views of the catalog
	// found built, and those dropped to keep the cache within its size.
	ViewCacheHits, ViewCacheEvictions prometheus.Counter
	// FastList and FastCall count the requests the HTTP fast path answered.
	FastList, FastCall prometheus.Counter

	reg   *prometheus.Registry
	src   Sources
	tools toolLabels
}

// NewMetrics registers the series; src is read at each scrape.
func NewMetrics(src Sources) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		src: src,
		Calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_tool_calls_total", Help: "Tool calls by canonical tool, source and outcome (ok or the error code).",
		}, []string{"tool", "source", "outcome"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "legate_tool_call_duration_seconds", Help: "Tool call latency through the gateway, approval waits included, by tool (the first " + strconv.Itoa(MaxToolLabels) + " tools called; the others as \"other\") and source.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"tool", "source"}),
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_policy_decisions_total", Help: "Policy decisions by action.",
		}, []string{"action"}),
		Decided: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "legate_approval_decision_seconds", Help: "Time from an approval request to its decision, for decisions this process saw.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}),
		Limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_rate_limited_total", Help: "Calls that ended RATE_LIMITED, by tool.",
		}, []string{"tool"}),
		OverBudget: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_budget_refused_total", Help: "Calls refused QUOTA_EXCEEDED because a budget of budgets: was spent, by scope (principal, tenant) and budget (calls, result_bytes, writes).",
		}, []string{"scope", "budget"}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_retries_total", Help: "Retries connectors made to their providers, by tool.",
		}, []string{"tool"}),
	}
	m.Throttled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "legate_provider_throttled_total", Help: "Provider answers that throttled a native call (HTTP 429 or the provider's rate-limit error), retried or ending the call, by tool: over legate_tool_calls_total, the throttled share.",
	}, []string{"tool"})
	m.DuplicatesPrevented = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "legate_duplicate_writes_prevented_total", Help: "Writes of native connectors not made again because their idempotency key's record showed them done (a retried call answered with the first outcome), by connector instance.",
	}, []string{"instance"})
	m.BackgroundErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "legate_background_errors_total", Help: "Errors of background work (approval heartbeats, expiry, recovery, runs), by operation.",
	}, []string{"op"})
	m.ViewCacheHits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "legate_view_cache_hits_total", Help: "Calls and lists whose caller's view of the catalog was found built.",
	})
	m.ViewCacheEvictions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "legate_view_cache_evictions_total", Help: "Views of the catalog dropped, least recently used first, to keep view_cache_size.",
	})
	// Known label values start at 0, so that an alert on increase() sees
	// the first error and every series a dashboard reads exists.
	for _, op := range []string{"heartbeat", "expire", "recover", "list_approved", "run_approved"} {
		m.BackgroundErrors.WithLabelValues(op)
	}
	for _, action := range []string{"allow", "deny", "approve"} {
		m.Decisions.WithLabelValues(action)
	}
	fast := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "legate_fast_path_requests_total", Help: "MCP requests answered without the go-sdk's decoding and encoding, by method (tools/call: relayed to an upstream as bytes).",
	}, []string{"method"})
	m.FastList, m.FastCall = fast.WithLabelValues("tools/list"), fast.WithLabelValues("tools/call")
	m.reg.MustRegister(m.Calls, m.Latency, m.Decisions, m.Decided, m.Limited, m.OverBudget, m.Retries, m.Throttled, m.DuplicatesPrevented, fast, m.BackgroundErrors, m.ViewCacheHits, m.ViewCacheEvictions,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "legate_catalog_tools", Help: "Tools in the catalog."},
			func() float64 { return float64(src.CatalogSize()) }),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Called counts one call of tool from source that ended with outcome
// after latency: the call, its latency and, RATE_LIMITED, the limit.
func (m *Metrics) Called(tool, source, outcome string, latency time.Duration) {
	m.Calls.WithLabelValues(tool, source, outcome).Inc()
	m.ObserveLatency(tool, source, latency.Seconds())
	if outcome == string(legate.CodeRateLimited) {
		m.Limited.WithLabelValues(tool).Inc()
	}
}

// Retried counts a connector's retry of a call of tool, and a throttled
// answer when the provider throttled it (reason "429").
func (m *Metrics) Retried(tool, reason string) {
	m.Retries.WithLabelValues(tool).Inc()
	if reason == "429" {
		m.Throttled.WithLabelValues(tool).Inc()
	}
}

// NativeEnded counts a native call of tool that a provider's throttling
// ended (err RATE_LIMITED).
func (m *Metrics) NativeEnded(tool string, err error) {
	if err != nil && legate.CodeOf(err) == legate.CodeRateLimited {
		m.Throttled.WithLabelValues(tool).Inc()
	}
}

// Register adds more collectors to the registry the handler serves.
func (m *Metrics) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Handler serves the series in the Prometheus text format. The series read
// from the store are gathered under each request's context.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrape := prometheus.NewRegistry()
		scrape.MustRegister(&scrapeCollector{ctx: r.Context(), src: m.src})
		promhttp.HandlerFor(prometheus.Gatherers{m.reg, scrape}, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
}
