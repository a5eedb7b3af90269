package notion_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// rewrite points notionapi's requests at the stand-in: the least a direct
// caller of the library needs to reach it.
type rewrite struct{ base *url.URL }

func (rw rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rw.base.Scheme, rw.base.Host, ""
	return http.DefaultTransport.RoundTrip(r)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSearch runs the search tool through the connector (Tool.Run:
// argument decoding, credential, rate limiter, retry loop, mapping to
// page.v1, signed refs and cursor) and the same search through notionapi
// directly, against the same stand-in, in rounds that alternate, and
// reports the connector's calls per second as a ratio of the direct
// calls' and the process's CPU time per call of each (the stand-in's
// included: it serves both).
func BenchmarkSearch(b *testing.B) {
	s := newStandin(b)
	workspace(s, 0, 20)
	in := build(b, s, "notion", "")
	tool := in.tool(b, "search")
	call := &connectors.Call{Tool: "search", Args: json.RawMessage(`{"query":"note","limit":20}`), Caller: connectors.Caller{Tenant: "t1"},
		Credentials: connectortest.Creds{"token": token}, Key: func() []byte { return in.key }}
	base, _ := url.Parse(s.srv.URL)
	direct := notionapi.NewClient(notionapi.Token(token), notionapi.WithHTTPClient(&http.Client{Transport: rewrite{base}}), notionapi.WithRetry(1), notionapi.WithVersion(version))
	req := &notionapi.SearchRequest{Query: "note", PageSize: 20, Filter: notionapi.SearchFilter{Property: "object", Value: "page"},
		Sort: &notionapi.SortObject{Timestamp: notionapi.TimestampLastEdited, Direction: notionapi.SortOrderDESC}}
	ctx := context.Background()
	viaConnector := func() {
		res, err := tool.Run(ctx, call)
		if err != nil || res == nil {
			b.Fatal(err)
		}
	}
	viaLibrary := func() {
		res, err := direct.Search.Do(ctx, req)
		if err != nil || len(res.Results) != 20 {
			b.Fatal(err)
		}
	}
	viaConnector() // warm both connections
	viaLibrary()
	const round = 50
	var wall, cpu [2]time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(round, b.N-done)
		for i, f := range []func(){viaConnector, viaLibrary} {
			t0, c0 := time.Now(), cpuTime()
			for range n {
				f()
			}
			wall[i] += time.Since(t0)
			cpu[i] += cpuTime() - c0
		}
		done += n
	}
	b.StopTimer()
	calls := float64(b.N)
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "ratio")
	b.ReportMetric(float64(wall[0].Microseconds())/calls, "connector-µs/call")
	b.ReportMetric(float64(wall[1].Microseconds())/calls, "direct-µs/call")
	b.ReportMetric(float64(cpu[0].Microseconds())/calls, "connector-cpu-µs/call")
	b.ReportMetric(float64(cpu[1].Microseconds())/calls, "direct-cpu-µs/call")
	b.ReportMetric(0, "ns/op") // both paths are timed above; ns/op would add them
}
