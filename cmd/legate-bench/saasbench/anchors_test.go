package saasbench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

func TestRunAnchorsWithoutThemSkipsNamingTheScript(t *testing.T) {
	t.Setenv("LEGATE_TOOLS_DIR", t.TempDir())
	var logged []string
	o := benchkit.Options{Legate: "/nonexistent/legate", Dir: t.TempDir(), Rounds: 1, Warmup: time.Millisecond, Window: time.Millisecond,
		C: []int{1}, Logf: func(f string, args ...any) { logged = append(logged, f) }}
	rows, err := RunAnchors(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Result != "SKIP" || !strings.Contains(rows[0].Metric, "bash "+AnchorScript) {
		t.Fatalf("rows %+v: want one SKIP row naming %s", rows, AnchorScript)
	}
	if rows[0].Legate == rows[0].Legate {
		t.Errorf("a skipped row holds a figure: %v", rows[0].Legate)
	}
	if len(logged) != 1 {
		t.Errorf("logged %q, want one line", logged)
	}
}

func TestAnchorRowsJudgeRateAndCPU(t *testing.T) {
	a, r := anchors[0], readerNamed(anchors[0].reader)
	an := benchkit.Series{Rate: []float64{100, 120}, P50: []float64{10, 10}, CPU: []float64{500, 520}}
	for _, tc := range []struct {
		lg             benchkit.Series
		rate, cpu      string
		rateX, cpuXMax float64
	}{
		{benchkit.Series{Rate: []float64{200, 240}, P50: []float64{5, 5}, CPU: []float64{250, 260}}, "PASS", "PASS", 2, 0.5},
		{benchkit.Series{Rate: []float64{50, 60}, P50: []float64{20, 20}, CPU: []float64{500, 520}}, "FAIL", "FAIL", 0.5, 1},
	} {
		rows := anchorRows(a, r, "HTTP", 8, an, tc.lg, "note")
		if len(rows) != 3 {
			t.Fatalf("%d rows, want 3", len(rows))
		}
		rate, cpu := rows[0], rows[2]
		if rate.Result != tc.rate || rate.Ratio != tc.rateX || rate.Baseline != 110 || !strings.Contains(rate.Metric, a.server) {
			t.Errorf("rate row %+v: want %s at %.1f×", rate, tc.rate, tc.rateX)
		}
		if cpu.Result != tc.cpu || cpu.Ratio != tc.cpuXMax {
			t.Errorf("CPU row %+v: want %s at %.1f×", cpu, tc.cpu, tc.cpuXMax)
		}
	}
}

// The Slack anchor reaches the stand-in only through slackPreload: a
// call of the global fetch to Slack's API must arrive there, path and
// query kept.
func TestSlackPreloadSendsFetchToTheStandIn(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.RequestURI()
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	preload := filepath.Join(t.TempDir(), "preload.mjs")
	if err := os.WriteFile(preload, []byte(slackPreload), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--import", "file://"+preload, "--input-type=module", "-e",
		`const r = await fetch("https://slack.com/api/conversations.list?limit=20"); console.log(await r.text());`)
	cmd.Env = append(os.Environ(), "LEGATE_BENCH_SLACK_API="+srv.URL+"/api/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	if uri := <-got; uri != "/api/conversations.list?limit=20" {
		t.Errorf("the stand-in got %s", uri)
	}
	if !strings.Contains(string(out), `"ok":true`) {
		t.Errorf("node printed %s", out)
	}
}
