package main

import (
	"fmt"
	"io"
	"math"
	"time"
)

// row is one line of the results table.
type row struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit"`
	Baseline float64 `json:"baseline"` // NaN: none
	Legate   float64 `json:"legate"`
	Ratio    float64 `json:"ratio"` // NaN: none
	Target   string  `json:"target"`
	Result   string  `json:"result"` // PASS, FAIL, or "" (informative)
	Note     string  `json:"note,omitempty"`
}

var none = math.NaN()

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// format renders a value in its unit.
func format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch unit {
	case "calls/s":
		return fmt.Sprintf("%.0f", v)
	case "µs":
		if math.Abs(v) >= 10000 {
			return fmt.Sprintf("%.2f ms", v/1000)
		}
		sign := ""
		if v < 0 {
			sign = "−"
			v = -v
		}
		return fmt.Sprintf("%s%.0f µs", sign, v)
	case "ms":
		return fmt.Sprintf("%.1f ms", v)
	case "MiB":
		return fmt.Sprintf("%.1f MiB", v)
	case "MB":
		return fmt.Sprintf("%.1f MB", v)
	case "KiB":
		return fmt.Sprintf("%.1f KiB", v)
	case "":
		return fmt.Sprintf("%.0f", v)
	case "s":
		return fmt.Sprintf("%.1f s", v)
	case "x":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// printTable writes the rows as a markdown table.
func printTable(w io.Writer, rows []row, judged bool) {
	fmt.Fprintln(w, "| scenario | metric | baseline | legate | ratio | target | result |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|---|")
	for _, r := range rows {
		ratio := "—"
		if !math.IsNaN(r.Ratio) {
			ratio = fmt.Sprintf("%.2f×", r.Ratio)
		}
		res := r.Result
		if !judged && res != "" && res != "SKIP" {
			res = "ran"
		}
		metric := r.Metric
		if r.Note != "" {
			metric += " (" + r.Note + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Scenario, metric,
			format(r.Baseline, r.Unit), format(r.Legate, r.Unit), ratio, orDash(r.Target), orDash(res))
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
