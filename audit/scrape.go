package audit

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	pendingDesc = prometheus.NewDesc("legate_approvals_pending", "Approval requests waiting for a decision.", nil, nil)
	circuitDesc = prometheus.NewDesc("legate_upstream_circuit_state", "Circuit state of each upstream: 0 closed, 1 half-open, 2 open.", []string{"upstream"}, nil)
	upDesc      = prometheus.NewDesc("legate_upstream_up", "1 if the upstream's last refresh succeeded.", []string{"upstream"}, nil)
	toolsDesc   = prometheus.NewDesc("legate_upstream_tools", "Cached tools of each upstream.", []string{"upstream"}, nil)
)

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
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	n, _ := c.src.PendingApprovals(c.ctx)
	ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n))
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

var _ prometheus.Collector = (*scrapeCollector)(nil)
