package audit

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate/store"
)

var (
	pendingDesc = prometheus.NewDesc("legate_approvals_pending", "Approval requests waiting for a decision.", nil, nil)
	circuitDesc = prometheus.NewDesc("legate_upstream_circuit_state", "Circuit state of each upstream: 0 closed, 1 half-open, 2 open.", []string{"upstream"}, nil)
	upDesc      = prometheus.NewDesc("legate_upstream_up", "1 if the upstream's last refresh succeeded.", []string{"upstream"}, nil)
	toolsDesc   = prometheus.NewDesc("legate_upstream_tools", "Cached tools of each upstream.", []string{"upstream"}, nil)
	oldestDesc  = prometheus.NewDesc("legate_approval_oldest_pending_seconds", "Age of the oldest approval request waiting for a decision (of the newest "+strconv.Itoa(scrapedPending)+"); 0 when none waits.", nil, nil)
)

// scrapedPending bounds the pending requests a scrape reads to find the
// oldest: the store lists the newest first.
const scrapedPending = 1000

// ApprovalLister is a Sources that can also list approval requests: the
// age of the oldest pending one is then reported.
type ApprovalLister interface {
	Approvals() store.ApprovalStore
}

// scrapeCollector reports, for one scrape, what is read from the store:
// the pending approvals and each upstream's circuit and health.
type scrapeCollector struct {
	ctx context.Context
	src Sources
}

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- circuitDesc
	ch <- upDesc
	ch <- toolsDesc
	ch <- oldestDesc
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	n, _ := c.src.PendingApprovals(c.ctx)
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n))
	if al, ok := c.src.(ApprovalLister); ok {
		c.collectOldest(ch, al.Approvals())
	}
	st, err := c.src.UpstreamStatus(c.ctx)
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

// collectOldest reports the age of the oldest pending approval request.
func (c *scrapeCollector) collectOldest(ch chan<- prometheus.Metric, st store.ApprovalStore) {
	pending, err := st.List(c.ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: scrapedPending})
	if err != nil {
		return
	}
	age := 0.0
	for _, a := range pending {
		age = max(age, time.Since(a.CreatedAt).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
}

var _ prometheus.Collector = (*scrapeCollector)(nil)
