package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/legate-mcp/legate"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// metrics are the gateway's Prometheus series, on its own registry.
type metrics struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	decided   prometheus.Histogram
	limited   *prometheus.CounterVec
	retries   *prometheus.CounterVec
	fast      *prometheus.CounterVec // requests the fast paths answered (fast.go)
	fastList  prometheus.Counter     // fast's tools/list
	fastCall  prometheus.Counter     // fast's tools/call
}

func newMetrics(g *Gateway) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_tool_calls_total", Help: "Tool calls by canonical tool, source and outcome (ok or the error code).",
		}, []string{"tool", "source", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "legate_tool_call_duration_seconds", Help: "Tool call latency through the gateway, approval waits included.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"source"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_policy_decisions_total", Help: "Policy decisions by action.",
		}, []string{"action"}),
		decided: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "legate_approval_decision_seconds", Help: "Time from an approval request to its decision, for decisions this process saw.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_rate_limited_total", Help: "Calls that ended RATE_LIMITED, by tool.",
		}, []string{"tool"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_retries_total", Help: "Retries connectors made to their providers, by tool.",
		}, []string{"tool"}),
		fast: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "legate_fast_path_requests_total", Help: "MCP requests answered without the go-sdk's decoding and encoding, by method (tools/call: relayed to an upstream as bytes).",
		}, []string{"method"}),
	}
	m.fastList, m.fastCall = m.fast.WithLabelValues("tools/list"), m.fast.WithLabelValues("tools/call")
	m.reg.MustRegister(m.calls, m.latency, m.decisions, m.decided, m.limited, m.retries, m.fast,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "legate_approvals_pending", Help: "Approval requests waiting for a decision."},
			func() float64 {
				n, _ := g.inbox.Store().CountPending(context.Background())
				return float64(n)
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "legate_catalog_tools", Help: "Tools in the catalog."},
			func() float64 { return float64(g.Catalog().Len()) }),
		&upstreamCollector{g: g},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// upstreamCollector reports each upstream's circuit and health at scrape time.
type upstreamCollector struct{ g *Gateway }

var (
	circuitDesc = prometheus.NewDesc("legate_upstream_circuit_state", "Circuit state of each upstream: 0 closed, 1 half-open, 2 open.", []string{"upstream"}, nil)
	upDesc      = prometheus.NewDesc("legate_upstream_up", "1 if the upstream's last refresh succeeded.", []string{"upstream"}, nil)
	toolsDesc   = prometheus.NewDesc("legate_upstream_tools", "Cached tools of each upstream.", []string{"upstream"}, nil)
)

func (c *upstreamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- circuitDesc
	ch <- upDesc
	ch <- toolsDesc
}

func (c *upstreamCollector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.g.upstreams.Status(context.Background())
	if err != nil {
		return
	}
	for _, s := range st {
		state := map[string]float64{"closed": 0, "half-open": 1, "open": 2}[s.Circuit]
		up := 0.0
		if s.LastError == "" && !s.RefreshedAt.IsZero() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(circuitDesc, prometheus.GaugeValue, state, s.ID)
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, up, s.ID)
		ch <- prometheus.MustNewConstMetric(toolsDesc, prometheus.GaugeValue, float64(s.Tools), s.ID)
	}
}

// sourceOf names a call's source for metrics and audit: "native:<id>",
// "upstream:<id>" or "builtin".
func sourceOf(r *Request) string {
	switch t := r.Entry.Target.(type) {
	case *nativeTool:
		if t.inst != nil {
			return "native:" + t.inst.def.ID
		}
	case *upstream.Tool:
		return "upstream:" + t.Upstream
	}
	return "builtin"
}

// outcomeCode is "ok", the canonical code of err, "TOOL_ERROR" for an
// upstream's own isError result, or "PROTOCOL_ERROR" for a relayed
// JSON-RPC error.
func outcomeCode(res *mcp.CallToolResult, err error) string {
	switch {
	case protocolError(err) != nil:
		return "PROTOCOL_ERROR"
	case err != nil:
		return string(legate.CodeOf(err))
	case res != nil && res.IsError:
		return "TOOL_ERROR"
	}
	return "ok"
}

// errorAttrs describe a failed call's error for the log: its code and a
// short hash of the text the client was given, never that text, which can
// quote the call's arguments (NOT_FOUND: no approval "…") — the log keeps
// the audit's promise to store no argument value. The hash lets an
// operator match a message a client reports.
func errorAttrs(err error) []any {
	if rpcErr := protocolError(err); rpcErr != nil {
		return []any{"rpc_code", rpcErr.Code, "error_hash", textHash(rpcErr.Message)}
	}
	text := ErrorResult(err).Content[0].(*mcp.TextContent).Text
	return []any{"code", legate.CodeOf(err), "error_hash", textHash(text)}
}

// textHash is a short hash of s: 12 hex digits of its SHA-256.
func textHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// Outcomes of calls refused before the call path.
const (
	outcomeUnknownTool = "UNKNOWN_TOOL"
	sourceUnknown      = "unknown"
)

// auditRefused writes the audit row and metrics of a call refused before
// the call path (an unknown or quarantined tool): who called, the name
// they gave, and the outcome. The name is the caller's own text, so it is
// bounded and made printable; the metrics name no unknown tool, whose
// names would be as many series.
func (g *Gateway) auditRefused(row store.AuditRow) {
	row.Time = time.Now()
	row.Tool = boundName(row.Tool)
	label := row.Tool
	if row.Source == sourceUnknown {
		label = "(unknown)"
	}
	g.metrics.calls.WithLabelValues(label, row.Source, row.Outcome).Inc()
	g.audit.add(row)
}

// maxAuditedName bounds a caller-supplied tool name in the audit, in bytes.
const maxAuditedName = 128

// boundName is name cut to maxAuditedName bytes, with every character
// that is not printable (controls, bidi overrides, bad UTF-8) as "?".
func boundName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, name)
	if len(name) <= maxAuditedName {
		return name
	}
	cut := maxAuditedName - len("…")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}

// observe is the audit and metrics step: one audit row and the metrics of
// every call, whatever its outcome.
func (g *Gateway) observe(next Handler) Handler {
	return func(ctx context.Context, r *Request) (*mcp.CallToolResult, error) {
		res, err := next(ctx, r)
		latency := time.Since(r.Start)
		source := sourceOf(r)
		outcome := outcomeCode(res, err)
		g.metrics.calls.WithLabelValues(r.Entry.Canonical, source, outcome).Inc()
		g.metrics.latency.WithLabelValues(source).Observe(latency.Seconds())
		if outcome == string(legate.CodeRateLimited) {
			g.metrics.limited.WithLabelValues(r.Entry.Canonical).Inc()
		}
		size := r.rawTextSize
		if res != nil {
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					size += len(t.Text)
				}
			}
		}
		g.audit.add(store.AuditRow{
			Time: r.Start, Principal: r.Caller.Principal, Tenant: r.Caller.Tenant, Session: r.Caller.Session,
			Tool: r.Entry.Canonical, Source: source, Class: string(r.Class),
			Decision: string(r.Decision.Action), Rule: r.Decision.RuleName(r.Class), ApprovalID: r.ApprovalID,
			Outcome: outcome, Latency: latency, ArgsHash: r.ArgsHash, ResultSize: size,
		})
		return res, err
	}
}

// auditWriter batches audit rows: the call path only appends to a buffer;
// a goroutine writes them in one transaction every 200ms (or at 512 rows).
type auditWriter struct {
	st  store.AuditStore
	log *slog.Logger

	mu   sync.Mutex
	buf  []store.AuditRow
	kick chan struct{}
	done chan struct{}
}

func newAuditWriter(st store.AuditStore, log *slog.Logger) *auditWriter {
	return &auditWriter{st: st, log: log, kick: make(chan struct{}, 1), done: make(chan struct{})}
}

func (w *auditWriter) add(row store.AuditRow) {
	w.mu.Lock()
	w.buf = append(w.buf, row)
	full := len(w.buf) >= 512
	w.mu.Unlock()
	if full {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// run flushes until stop; retention > 0 prunes older rows hourly.
func (w *auditWriter) run(ctx context.Context, retention time.Duration) {
	flush := time.NewTicker(200 * time.Millisecond)
	defer flush.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	w.prune(ctx, retention)
	for {
		select {
		case <-ctx.Done():
			w.flush(context.WithoutCancel(ctx))
			close(w.done)
			return
		case <-flush.C:
		case <-w.kick:
		case <-prune.C:
			w.prune(ctx, retention)
		}
		w.flush(ctx)
	}
}

func (w *auditWriter) prune(ctx context.Context, retention time.Duration) {
	if retention <= 0 {
		return
	}
	if n, err := w.st.Prune(ctx, time.Now().Add(-retention)); err != nil {
		w.log.Warn("pruning audit rows", "error", err)
	} else if n > 0 {
		w.log.Info("pruned audit rows", "count", n, "older_than", retention)
	}
}

// flush writes what is buffered. A failed write keeps the rows for the
// next attempt, so none is lost to a passing error.
func (w *auditWriter) flush(ctx context.Context) {
	w.mu.Lock()
	rows := w.buf
	w.buf = nil
	w.mu.Unlock()
	if len(rows) == 0 {
		return
	}
	if err := w.st.Append(ctx, rows); err != nil {
		w.log.Error("writing audit rows; will retry", "rows", len(rows), "error", err)
		w.mu.Lock()
		w.buf = append(rows, w.buf...)
		w.mu.Unlock()
	}
}
