package sqlbench

import (
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

// P6 is judged as P7: Legate against the bound of any gateway, ≥ Target,
// and nothing else.
func TestRowsJudgeLegateAgainstTheBoundOnly(t *testing.T) {
	d := benchkit.Series{Rate: []float64{1000}, P50: []float64{100}, CPU: []float64{100}}
	h := benchkit.Series{Rate: []float64{1000}, P50: []float64{100}, CPU: []float64{100}} // bound: 500
	for _, tc := range []struct {
		legate float64
		result string
	}{{450, "PASS"}, {350, "FAIL"}} {
		v := benchkit.Series{Rate: []float64{tc.legate}, P50: []float64{200}, CPU: []float64{300}}
		var judged []benchkit.Row
		for _, r := range rowsAt(8, true, d, v, d, h) {
			if r.Result == "PASS" || r.Result == "FAIL" {
				judged = append(judged, r)
			}
		}
		if len(judged) != 1 {
			t.Fatalf("judged rows %+v, want one", judged)
		}
		r := judged[0]
		if !strings.Contains(r.Metric, "against that bound") || r.Baseline != 500 || r.Target != "≥ 0.8× the bound" || r.Result != tc.result {
			t.Errorf("Legate at %v calls/s: %+v, want %s against the bound of 500", tc.legate, r, tc.result)
		}
	}
}

func TestInstanceIsReadOnlyOnTheDatabase(t *testing.T) {
	db, _ := url.Parse("postgres://postgres@127.0.0.1/legate_bench_ab12?sslmode=disable")
	got := Instance("pg", db, 8)
	for _, want := range []string{"- id: pg\n", "type: postgres", `host: "127.0.0.1", port: 5432, database: "legate_bench_ab12", user: "postgres"`, "read_only: true", "max_conns: 8"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
