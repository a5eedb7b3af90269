// Package searchbench is the harness's scenario P9: legate.search_tools
// over a catalog of 10,000 tools (50 upstreams of 200 tools each, with
// names and descriptions drawn from the verbs, objects and services real
// MCP servers expose), against a baseline that scans every tool's name
// and description for the query's words, as a client holding the whole
// list would. Both run in this process on the same catalog: the figure is
// the tool's own work (profiles.Search, as the gateway runs it per call),
// not the MCP framing around it, which P1 measures for any native tool.
package searchbench

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/profiles"
)

// The targets of P9, in milliseconds.
const (
	TargetP50 = 1.0
	TargetP99 = 5.0
)

// Upstreams and ToolsPerUpstream shape the catalog.
const (
	Upstreams        = 50
	ToolsPerUpstream = 200
)

var services = []string{
	"github", "gitlab", "jira", "linear", "asana", "trello", "notion", "confluence", "slack", "teams",
	"discord", "gmail", "outlook", "gcal", "zoom", "drive", "dropbox", "box", "s3", "postgres",
	"mysql", "mongo", "redis", "elastic", "stripe", "paypal", "shopify", "hubspot", "salesforce", "zendesk",
	"intercom", "twilio", "sendgrid", "mailchimp", "datadog", "sentry", "pagerduty", "grafana", "vercel", "netlify",
	"cloudflare", "aws", "gcp", "azure", "docker", "kubernetes", "figma", "airtable", "sheets", "calendly",
}

var verbs = []struct{ name, text string }{
	{"list", "List the %s of the %s account, newest first, with paging"},
	{"get", "Get one %s of %s by its id, with all its fields"},
	{"create", "Create a new %s in %s"},
	{"update", "Update the fields of an existing %s in %s"},
	{"delete", "Delete a %s from %s permanently"},
	{"search", "Search the %s of %s by text, returning the best matches"},
	{"archive", "Archive a %s in %s so it no longer shows in lists"},
	{"export", "Export the %s of %s as CSV or JSON"},
}

var objects = []string{
	"issue", "comment", "pull_request", "branch", "commit", "repository", "project", "task", "page", "database",
	"message", "channel", "thread", "user", "team", "email", "draft", "event", "meeting", "file",
	"folder", "document", "bucket", "table", "row", "query", "customer", "invoice", "payment", "refund",
	"order", "product", "contact", "deal", "ticket", "incident", "alert", "dashboard", "deployment", "record",
}

// Catalog builds the P9 catalog: Upstreams × ToolsPerUpstream upstream
// tools, mcp.<service>.<verb>_<object>.
func Catalog() (*catalog.Catalog, error) {
	return CatalogOf(Upstreams, ToolsPerUpstream)
}

// CatalogOf builds a catalog as P9's of ups upstreams of perUpstream
// tools each; past the fiftieth, a service's name takes a number
// (github2, …), so that every canonical name stays unique.
func CatalogOf(ups, perUpstream int) (*catalog.Catalog, error) {
	var entries []*catalog.Entry
	for u := range ups {
		svc := services[u%len(services)]
		if u >= len(services) {
			svc += fmt.Sprint(u/len(services) + 1)
		}
		for j := range perUpstream {
			v := verbs[j%len(verbs)]
			obj := objects[(j/len(verbs)+u)%len(objects)]
			name := fmt.Sprintf("%s_%s", v.name, obj)
			if j >= len(verbs)*len(objects) {
				name += fmt.Sprintf("_%d", j)
			}
			words := strings.ReplaceAll(obj, "_", " ")
			desc := fmt.Sprintf(v.text, words+"s", svc) + "."
			class := legate.ClassWrite
			if v.name == "list" || v.name == "get" || v.name == "search" || v.name == "export" {
				class = legate.ClassRead
			}
			schema := fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"the %s's id"},"limit":{"type":"integer","description":"how many at most"}}}`, obj, words)
			entries = append(entries, &catalog.Entry{
				Canonical: "mcp." + svc + "." + name, Source: "upstream " + svc, Class: class,
				Tool: &mcp.Tool{Name: name, Description: desc, InputSchema: []byte(schema)},
			})
		}
	}
	return catalog.Build(catalog.Safe, entries)
}

// queries are what agents ask for; each is searched in turn.
var queries = []string{
	"open a ticket about the login bug in jira", "post a message to the deploys channel on slack",
	"find the customer who paid the last invoice", "refund the double charge in stripe",
	"show the open pull requests of the repository", "what meetings do I have tomorrow",
	"delete the old s3 bucket", "export the dashboard from grafana as csv",
	"search confluence pages about onboarding", "list the incidents on pagerduty",
	"archive the trello task", "update the hubspot deal amount",
}

// Run measures P9.
func Run(ctx context.Context, o benchkit.Options) ([]benchkit.Row, error) {
	cat, err := Catalog()
	if err != nil {
		return nil, err
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	built := time.Now()
	ix := cat.Index()
	buildMs := float64(time.Since(built).Microseconds()) / 1000
	runtime.GC()
	runtime.ReadMemStats(&after)
	indexBytes := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	runtime.KeepAlive(ix)

	n := 2000
	if o.Window > 0 && o.Window < time.Second {
		n = 200 // a smoke run
	}
	scan := func(q string) error {
		words := strings.Fields(strings.ToLower(q))
		type hit struct {
			i, n int
		}
		var hits []hit
		for i, e := range cat.Entries() {
			text := strings.ToLower(e.Canonical + " " + e.Tool.Description)
			c := 0
			for _, w := range words {
				if strings.Contains(text, w) {
					c++
				}
			}
			if c > 0 {
				hits = append(hits, hit{i, c})
			}
		}
		slices.SortStableFunc(hits, func(a, b hit) int { return b.n - a.n })
		return nil
	}
	legateP, err := Latencies(ctx, cat, n)
	if err != nil {
		return nil, err
	}
	baseP, err := latencies(ctx, n, scan)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("%d tools (%d upstreams × %d), %d searches of %d queries, limit 5; baseline: a word scan of every name and description",
		cat.Len(), Upstreams, ToolsPerUpstream, n, len(queries))
	row := func(metric string, base, legate, target float64) benchkit.Row {
		r := benchkit.Row{Scenario: "P9", Metric: metric, Unit: "µs", Baseline: base * 1000, Legate: legate * 1000, Ratio: legate / base,
			Target: fmt.Sprintf("≤ %g ms", target), Result: "PASS", Note: note}
		if legate > target {
			r.Result = "FAIL"
		}
		return r
	}
	o.Logf("P9: index built in %.1f ms, %.1f MiB", buildMs, indexBytes/(1<<20))
	return []benchkit.Row{
		row("search_tools p50", baseP[0], legateP[0], TargetP50),
		row("search_tools p99", baseP[1], legateP[1], TargetP99),
		row("search_tools p50 CPU", baseP[2], legateP[2], TargetP50),
		row("search_tools p99 CPU", baseP[3], legateP[3], TargetP99),
		{Scenario: "P9", Metric: "search index memory", Unit: "MiB", Baseline: math.NaN(), Legate: indexBytes / (1 << 20), Ratio: math.NaN(),
			Note: fmt.Sprintf("heap growth building the index of the %d tools (built in %.1f ms, once per catalog view)", cat.Len(), buildMs)},
	}, nil
}

// Latencies runs legate.search_tools's search (profiles.Search, limit 5)
// over cat n times, the queries in turn, as latencies does.
func Latencies(ctx context.Context, cat *catalog.Catalog, n int) ([4]float64, error) {
	return latencies(ctx, n, func(q string) error {
		found, err := profiles.Search(cat, &profiles.SearchArgs{Query: q, Limit: 5})
		if err == nil && len(found) == 0 {
			err = fmt.Errorf("no tool found for %q", q)
		}
		return err
	})
}

// latencies runs f n times over the queries and returns its p50 and p99
// in milliseconds: of wall time, then of the thread's CPU time (which a
// loaded machine's preemption does not inflate).
func latencies(ctx context.Context, n int, f func(q string) error) ([4]float64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wall, cpu := make([]float64, 0, n), make([]float64, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return [4]float64{}, err
		}
		c0 := threadCPU()
		t0 := time.Now()
		if err := f(queries[i%len(queries)]); err != nil {
			return [4]float64{}, err
		}
		wall = append(wall, float64(time.Since(t0).Nanoseconds())/1e6)
		cpu = append(cpu, float64(threadCPU()-c0)/1e6)
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	return [4]float64{wall[n/2], wall[n*99/100], cpu[n/2], cpu[n*99/100]}, nil
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}
