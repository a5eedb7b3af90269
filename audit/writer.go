package audit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate/store"
)

// Writer batches audit rows: the call path only appends to a buffer;
// a goroutine writes them in one transaction every 200ms (or at 512 rows).
type Writer struct {
	st  store.AuditStore
	log *slog.Logger

	mu   sync.Mutex
	buf  []store.AuditRow
	kick chan struct{}

	failures atomic.Int64 // writes that failed and will be tried again
	written  atomic.Int64 // rows stored
}

// NewWriter returns a writer appending to st; Run writes them. A nil log
// discards the writer's own errors.
func NewWriter(st store.AuditStore, log *slog.Logger) *Writer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Writer{st: st, log: log, kick: make(chan struct{}, 1)}
}

// Add queues row; it never blocks on the store.
func (w *Writer) Add(row store.AuditRow) {
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

// Run flushes until ctx ends, then once more; retention > 0 prunes older rows hourly.
func (w *Writer) Run(ctx context.Context, retention time.Duration) {
	flush := time.NewTicker(200 * time.Millisecond)
	defer flush.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	w.prune(ctx, retention)
	for {
		select {
		case <-ctx.Done():
			w.flush(context.WithoutCancel(ctx))
			return
		case <-flush.C:
		case <-w.kick:
		case <-prune.C:
			w.prune(ctx, retention)
		}
		w.flush(ctx)
	}
}

func (w *Writer) prune(ctx context.Context, retention time.Duration) {
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
func (w *Writer) flush(ctx context.Context) {
	w.mu.Lock()
	rows := w.buf
	w.buf = nil
	w.mu.Unlock()
	if len(rows) == 0 {
		return
	}
	if err := w.st.Append(ctx, rows); err != nil {
		w.failures.Add(1)
		w.log.Error("writing audit rows; will retry", "rows", len(rows), "error", err)
		w.mu.Lock()
		w.buf = append(rows, w.buf...)
		w.mu.Unlock()
		return
	}
	w.written.Add(int64(len(rows)))
}

var (
	queuedDesc   = prometheus.NewDesc("legate_audit_queued_rows", "Audit rows waiting to be written; it grows while the store is slower than the calls or failing.", nil, nil)
	writtenDesc  = prometheus.NewDesc("legate_audit_rows_written_total", "Audit rows written to the store.", nil, nil)
	failuresDesc = prometheus.NewDesc("legate_audit_write_failures_total", "Writes of audit rows that failed; their rows are kept and written again.", nil, nil)
)

// Describe and Collect report the writer's queue and writes at scrape
// time, off the call path: register the writer with Metrics.Register.
func (w *Writer) Describe(ch chan<- *prometheus.Desc) {
	ch <- queuedDesc
	ch <- writtenDesc
	ch <- failuresDesc
}

func (w *Writer) Collect(ch chan<- prometheus.Metric) {
	w.mu.Lock()
	queued := len(w.buf)
	w.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(queuedDesc, prometheus.GaugeValue, float64(queued))
	ch <- prometheus.MustNewConstMetric(writtenDesc, prometheus.CounterValue, float64(w.written.Load()))
	ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.CounterValue, float64(w.failures.Load()))
}

var _ prometheus.Collector = (*Writer)(nil)
