package audit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/store"
)

// flaky is an audit store whose first append fails.
type flaky struct {
	mu     sync.Mutex
	failed bool
	rows   []store.AuditRow
}

func (f *flaky) Append(_ context.Context, rows []store.AuditRow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failed {
		f.failed = true
		return errors.New("database is locked")
	}
	f.rows = append(f.rows, rows...)
	return nil
}

func (f *flaky) Query(context.Context, store.AuditQuery) ([]store.AuditRow, error) { return nil, nil }
func (f *flaky) Prune(context.Context, time.Time) (int64, error)                   { return 0, nil }

func (f *flaky) stored() []store.AuditRow {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rows
}

func TestWriterKeepsRowsAFailedWriteCouldNotStore(t *testing.T) {
	st := &flaky{}
	w := audit.NewWriter(st, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, 0); close(done) }()
	w.Add(store.AuditRow{Tool: "a.one"})
	w.Add(store.AuditRow{Tool: "a.two"})
	deadline := time.Now().Add(5 * time.Second)
	for len(st.stored()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	w.Add(store.AuditRow{Tool: "a.three"})
	cancel()
	<-done
	var got []string
	for _, r := range st.stored() {
		got = append(got, r.Tool)
	}
	if strings.Join(got, ",") != "a.one,a.two,a.three" {
		t.Fatalf("stored %v, want every row once, in order, the last flushed at stop", got)
	}
	m := audit.NewMetrics(&sources{})
	m.Register(w)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{"legate_audit_queued_rows 0", "legate_audit_rows_written_total 3", "legate_audit_write_failures_total 1"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("no %q in:\n%s", want, rec.Body.String())
		}
	}
}

// sources records the context of each scrape.
type sources struct {
	mu   sync.Mutex
	ctxs []context.Context
}

func (s *sources) PendingApprovals(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctxs = append(s.ctxs, ctx)
	return 3, nil
}

func (s *sources) CatalogSize() int { return 7 }

func (s *sources) UpstreamStatus(ctx context.Context) ([]audit.UpstreamStatus, error) {
	return []audit.UpstreamStatus{{ID: "up", Circuit: "open", Tools: 2}}, nil
}

type ctxKey struct{}

func TestMetricsReadTheStoreUnderTheScrapesContext(t *testing.T) {
	src := &sources{}
	m := audit.NewMetrics(src)
	m.Calls.WithLabelValues("a.b", "native:a", "ok").Inc()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req = req.WithContext(context.WithValue(req.Context(), ctxKey{}, "scrape"))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`legate_tool_calls_total{outcome="ok",source="native:a",tool="a.b"} 1`,
		"legate_approvals_pending 3", "legate_catalog_tools 7",
		`legate_upstream_circuit_state{upstream="up"} 2`, `legate_upstream_tools{upstream="up"} 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %q in:\n%s", want, body)
		}
	}
	if len(src.ctxs) != 1 || src.ctxs[0].Value(ctxKey{}) != "scrape" {
		t.Fatalf("the store was read under %v, want the scrape request's context", src.ctxs)
	}
}

func TestLatencyToolLabelsAreBounded(t *testing.T) {
	m := audit.NewMetrics(&sources{})
	for i := range audit.MaxToolLabels + 50 {
		m.ObserveLatency(fmt.Sprintf("t.tool%03d", i), "native:t", 0.001)
	}
	m.ObserveLatency("t.tool000", "native:t", 0.001) // admitted already: keeps its label
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	tools := map[string]string{}
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "legate_tool_call_duration_seconds_count{"); ok {
			_, after, _ := strings.Cut(rest, `tool="`)
			tool, _, _ := strings.Cut(after, `"`)
			tools[tool] = line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	if len(tools) != audit.MaxToolLabels+1 {
		t.Fatalf("%d tool labels, want %d and %q", len(tools), audit.MaxToolLabels, audit.OtherTool)
	}
	if tools[audit.OtherTool] != "50" || tools["t.tool000"] != "2" || tools["t.tool099"] != "1" || tools["t.tool100"] != "" {
		t.Fatalf("counts: other %s, first %s, last admitted %s, first refused %q", tools[audit.OtherTool], tools["t.tool000"], tools["t.tool099"], tools["t.tool100"])
	}
}

// BenchmarkObserveLatency is the latency histogram's cost per call with
// its tool label bounded.
func BenchmarkObserveLatency(b *testing.B) {
	m := audit.NewMetrics(&sources{})
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveLatency("mcp.up.echo", "upstream:up", 0.001)
	}
}

// BenchmarkObserveLatencySourceOnly is a histogram labelled by source
// alone, as the latency histogram was before its tool label.
func BenchmarkObserveLatencySourceOnly(b *testing.B) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "x", Buckets: prometheus.DefBuckets}, []string{"source"})
	b.ReportAllocs()
	for b.Loop() {
		h.WithLabelValues("upstream:up").Observe(0.001)
	}
}
