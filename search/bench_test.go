package search_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/legate-mcp/legate/search"
)

// benchDocs is the corpus of testdata/tools repeated under as many
// upstream names as make n tools: real names, descriptions and schemas
// at the scale of P9 (docs/BENCHMARKS.md).
func benchDocs(b *testing.B, n int) []search.Doc {
	tools := loadCorpus(b)
	docs := make([]search.Doc, 0, n)
	for copy := 0; len(docs) < n; copy++ {
		for _, ct := range tools {
			if len(docs) == n {
				break
			}
			server := fmt.Sprintf("%s%d", ct.server, copy)
			docs = append(docs, search.FromTool(fmt.Sprintf("mcp.%s.%s", server, ct.tool.Name), server, ct.tool))
		}
	}
	return docs
}

// benchQueries are the requests of testdata/queries.json.
func benchQueries(b *testing.B) []string {
	qs := loadQueries(b)
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Query
	}
	return out
}

// BenchmarkSearch10k: one search of limit 5 over 10,000 tools, the
// requests of testdata/queries.json in turn. Beside the wall time, it
// reports the median and 99th percentile of a search's CPU time (of its
// thread), which a loaded machine's preemption does not inflate.
func BenchmarkSearch10k(b *testing.B) {
	ix := search.New(benchDocs(b, 10000))
	qs := benchQueries(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu []float64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c0 := threadCPU()
		ix.Search(qs[i%len(qs)], search.Options{Limit: 5})
		cpu = append(cpu, float64(threadCPU()-c0)/1e3)
	}
	slices.Sort(cpu)
	b.ReportMetric(cpu[len(cpu)/2], "p50-cpu-µs")
	b.ReportMetric(cpu[len(cpu)*99/100], "p99-cpu-µs")
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}

// BenchmarkBuild10k: building the index of 10,000 tools; heap-MiB is the
// index's size once built.
func BenchmarkBuild10k(b *testing.B) {
	docs := benchDocs(b, 10000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := search.New(docs)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(ix)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		search.New(docs)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
}
