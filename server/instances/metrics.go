package instances

import "github.com/prometheus/client_golang/prometheus"

var circuitDesc = prometheus.NewDesc("legate_connector_circuit_state",
	"Circuit state of each native connector instance: 0 closed, 1 half-open, 2 open (as legate_upstream_circuit_state).", []string{"connector"}, nil)

// circuits reports each instance's circuit at scrape time.
type circuits struct{ set func() Set }

// Circuits is the collector of legate_connector_circuit_state over the
// instances set returns at each scrape.
func Circuits(set func() Set) prometheus.Collector { return circuits{set} }

func (c circuits) Describe(ch chan<- *prometheus.Desc) { ch <- circuitDesc }

func (c circuits) Collect(ch chan<- prometheus.Metric) {
	for _, in := range c.set() {
		if in.Health == nil {
			continue
		}
		state := map[string]float64{"closed": 0, "half-open": 1, "open": 2}[in.Health.breaker.State().String()]
		ch <- prometheus.MustNewConstMetric(circuitDesc, prometheus.GaugeValue, state, in.Def.ID)
	}
}
