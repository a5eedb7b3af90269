package audit

import (
	"sync"
	"sync/atomic"
)

// MaxToolLabels bounds the tool label of the latency histogram: the first
// MaxToolLabels tools called have series of their own, every later one
// shares the series of OtherTool. The catalog can hold thousands of tools;
// each would multiply the histogram's buckets.
const MaxToolLabels = 100

// OtherTool is the tool label of the calls to tools past MaxToolLabels.
const OtherTool = "other"

// toolLabels admits tool labels up to MaxToolLabels. A tool admitted once
// keeps its label for the life of the process, so its series never
// restarts; the lookup of an admitted tool takes no lock.
type toolLabels struct {
	seen sync.Map // tool → struct{}
	n    atomic.Int32
	mu   sync.Mutex // serializes admissions
}

// label is the tool label of a call to tool.
func (t *toolLabels) label(tool string) string {
	if _, ok := t.seen.Load(tool); ok {
		return tool
	}
	if t.n.Load() >= MaxToolLabels {
		return OtherTool
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen.Load(tool); ok {
		return tool
	}
	if t.n.Load() >= MaxToolLabels {
		return OtherTool
	}
	t.seen.Store(tool, struct{}{})
	t.n.Add(1)
	return tool
}

// ObserveLatency records the latency of one call to tool from source.
func (m *Metrics) ObserveLatency(tool, source string, seconds float64) {
	m.Latency.WithLabelValues(m.tools.label(tool), source).Observe(seconds)
}
