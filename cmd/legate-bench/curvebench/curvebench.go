// Package curvebench is legate-bench's cost curves (`legate-bench -curves
// DIR`, `make bench-curves`): how Legate's cost grows with the work it is
// given — cached tools (tools/list, legate.search_tools), idle sessions
// (RSS), configured upstreams (call throughput), approval requests in the
// store (the inbox's operations) and audit rows under sustained calls
// (the store's file, and retention keeping it flat). Each curve is
// measured at work a decade apart, printed as a markdown table with the
// cost per 10× work and the growth class read off it (Growth), and drawn
// as an SVG line plot (Plot) into DIR.
package curvebench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// Options are the curves' settings.
type Options struct {
	// Legate is the legate binary, Dir a scratch directory, Out where the
	// SVGs go.
	Legate, Dir, Out string
	// Smoke measures small work, briefly: a check that every curve runs.
	Smoke bool
	// Window is each load measurement's window, Warmup what precedes it.
	Window, Warmup time.Duration
	// Audit is how long the audit curve's calls run, AuditRate their rate.
	Audit     time.Duration
	AuditRate int
	// Only, when not empty, names the curves to measure (tools, sessions,
	// upstreams, approvals, audit); the others are left out.
	Only []string
	Logf func(format string, args ...any)
}

// Curve is one measured curve: a table and a plot.
type Curve struct {
	// ID names the SVG (ID.svg); Title heads the table and the plot.
	ID, Title string
	// Work is what the x axis counts ("cached tools").
	Work       string
	LogX, LogY bool
	YLabel     string
	Metrics    []Metric
	// Notes follow the table.
	Notes []string
}

// Metric is one series of a curve.
type Metric struct {
	Name, Unit string
	// Expect is the growth it should show at most (Constant, Log, Linear;
	// "": none judged).
	Expect string
	// Inverse: the figures are rates (work per second), their cost the inverse.
	Inverse bool
	// NoGrowth: the series is shown but not read for growth (a time series).
	NoGrowth bool
	Points   []Point
}

// Run measures every curve, writes their SVGs into o.Out and their
// tables (markdown) to w. A curve that cannot run is reported and the
// others still run; the error names those that failed.
func Run(ctx context.Context, o Options, w io.Writer) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	start, load0 := time.Now(), harness.LoadAvg()
	type step struct {
		name string
		run  func(context.Context, Options) ([]Curve, error)
	}
	steps := []step{{"tools", toolCurves}, {"sessions", sessionCurve}, {"upstreams", upstreamCurve}, {"approvals", approvalCurves}, {"audit", auditCurve}}
	if len(o.Only) > 0 {
		for _, name := range o.Only {
			if !slices.ContainsFunc(steps, func(s step) bool { return s.name == name }) {
				return fmt.Errorf("no curve %q (tools, sessions, upstreams, approvals, audit)", name)
			}
		}
		steps = slices.DeleteFunc(steps, func(s step) bool { return !slices.Contains(o.Only, s.name) })
	}
	var curves []Curve
	var failed []string
	for _, s := range steps {
		t0 := time.Now()
		o.Logf("curves: %s…", s.name)
		cs, err := s.run(ctx, o)
		if err != nil {
			o.Logf("curves: %s FAILED: %v", s.name, err)
			failed = append(failed, s.name+": "+harness.FirstLine(err.Error()))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		o.Logf("curves: %s done in %s", s.name, time.Since(t0).Round(time.Second))
		curves = append(curves, cs...)
	}
	fmt.Fprintln(w, harness.MachineLine())
	mode := fmt.Sprintf("%s windows after %s warm-up, audit %s at %d calls/s", o.Window, o.Warmup, o.Audit, o.AuditRate)
	if o.Smoke {
		mode = "smoke: small work, " + mode + " (figures checked, growth not judged)"
	}
	fmt.Fprintf(w, "Run: %s; %s; took %s; load average %s at start, %s at end.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), mode,
		time.Since(start).Round(time.Second), load0, harness.LoadAvg())
	for _, c := range curves {
		if err := c.check(); err != nil {
			failed = append(failed, c.ID+": "+err.Error())
			continue
		}
		c.table(w, !o.Smoke)
		if err := c.writeSVG(filepath.Join(o.Out, c.ID+".svg")); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("curves failed: %s", strings.Join(failed, "; "))
	}
	return nil
}

// check refuses a curve holding no figure, or a figure that is not a
// positive number (a measurement that silently produced nothing).
func (c Curve) check() error {
	if len(c.Metrics) == 0 {
		return fmt.Errorf("no metric")
	}
	for _, m := range c.Metrics {
		if len(m.Points) == 0 {
			return fmt.Errorf("%s: no figure", m.Name)
		}
		for _, p := range m.Points {
			if !(p.Y > 0) || math.IsInf(p.Y, 0) || !(p.X > 0 || !c.LogX) {
				return fmt.Errorf("%s: figure %v at %v", m.Name, p.Y, p.X)
			}
		}
	}
	return nil
}

// table writes c as a markdown table: a column per work measured, then
// the cost per 10× work and the growth read off it, marked when judged
// and faster than expected.
func (c Curve) table(w io.Writer, judged bool) {
	var xs []float64
	for _, m := range c.Metrics {
		if m.NoGrowth {
			continue
		}
		for _, p := range m.Points {
			if !slices.Contains(xs, p.X) {
				xs = append(xs, p.X)
			}
		}
	}
	slices.Sort(xs)
	fmt.Fprintf(w, "**%s** (`docs/curves/%s.svg`)\n\n", c.Title, c.ID)
	if len(xs) > 0 {
		fmt.Fprint(w, "| metric |")
		for _, x := range xs {
			work := c.Work
			if x == 1 {
				work = strings.TrimSuffix(work, "s")
			}
			fmt.Fprintf(w, " %s %s |", count(x), work)
		}
		fmt.Fprintln(w, " cost per 10× work, last decade | growth | expected |")
		fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(xs))+"---:|---|---|")
		for _, m := range c.Metrics {
			if m.NoGrowth {
				continue
			}
			fmt.Fprintf(w, "| %s |", m.Name)
			for _, x := range xs {
				v := math.NaN()
				for _, p := range m.Points {
					if p.X == x {
						v = p.Y
					}
				}
				fmt.Fprintf(w, " %s |", format(v, m.Unit))
			}
			r, class := Growth(m.Points, m.Inverse)
			if judged && Exceeds(class, m.Expect) {
				class = "**" + class + "** (faster than expected)"
			}
			fmt.Fprintf(w, " %.2f× | %s | %s |\n", r, class, orDash(m.Expect))
		}
		fmt.Fprintln(w)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "%s\n\n", n)
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// writeSVG draws c into path.
func (c Curve) writeSVG(path string) error {
	p := Plot{Title: c.Title, XLabel: c.Work, YLabel: c.YLabel, LogX: c.LogX, LogY: c.LogY}
	for _, m := range c.Metrics {
		p.Series = append(p.Series, Line{Name: m.Name, Points: m.Points})
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// benchOptions are o as the harness's shared helpers take them.
func (o Options) benchOptions() benchkit.Options {
	return benchkit.Options{Legate: o.Legate, Dir: o.Dir, Rounds: 1, Warmup: o.Warmup, Window: o.Window, Logf: o.Logf}
}

// pick is the smoke or the full value.
func pick[T any](o Options, smoke, full T) T {
	if o.Smoke {
		return smoke
	}
	return full
}
