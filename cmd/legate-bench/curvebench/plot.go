package curvebench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Plot is one SVG line plot: a line and a dot per measured value for each
// series, on a log or linear scale per axis.
type Plot struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Series                []Line
}

// Line is one series of a plot.
type Line struct {
	Name   string
	Points []Point
}

// Point is one measured value: the work X and its cost Y.
type Point struct{ X, Y float64 }

// The plot's geometry, in SVG user units.
const (
	plotW, plotH                        = 640, 400
	marginL, marginR, marginT, marginB  = 70, 20, 36, 56
	innerW, innerH                      = plotW - marginL - marginR, plotH - marginT - marginB
	legendDY                            = 16
	axisColour, gridColour, labelColour = "#333", "#ddd", "#222"
	fontFamily                          = "sans-serif"
	fontSize, titleSize                 = 12, 14
	pointRadius                         = 3.5
	minLogSpan                          = 1.0 // decades shown at least on a log axis
	linearHeadroom                      = 1.1
)

var colours = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// axis maps values to pixels along one axis.
type axis struct {
	log    bool
	lo, hi float64 // in log10 units on a log axis
	pixels float64
}

func newAxis(values []float64, log bool, pixels float64) axis {
	a := axis{log: log, pixels: pixels}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		if log {
			if v <= 0 {
				continue
			}
			v = math.Log10(v)
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	switch {
	case math.IsInf(lo, 1): // no value
		lo, hi = 0, 1
	case log:
		lo, hi = math.Floor(lo), math.Ceil(hi)
		if hi-lo < minLogSpan {
			hi = lo + minLogSpan
		}
	default:
		lo = math.Min(lo, 0)
		hi = math.Max(hi*linearHeadroom, lo+1e-9)
	}
	a.lo, a.hi = lo, hi
	return a
}

// at is the pixel offset of v from the axis's start; ok is false for a
// value a log axis cannot show.
func (a axis) at(v float64) (float64, bool) {
	if a.log {
		if v <= 0 {
			return 0, false
		}
		v = math.Log10(v)
	}
	return (v - a.lo) / (a.hi - a.lo) * a.pixels, true
}

// ticks are the values to label: each decade on a log axis, five steps on
// a linear one.
func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for d := a.lo; d <= a.hi+1e-9; d++ {
			out = append(out, math.Pow(10, d))
		}
		return out
	}
	for i := range 6 {
		out = append(out, a.lo+(a.hi-a.lo)*float64(i)/5)
	}
	return out
}

// tickLabel writes v shortly: 1k, 10k, 1M, 0.5, 12.
func tickLabel(v float64) string {
	switch av := math.Abs(v); {
	case av >= 1e6 && math.Mod(av, 1e6) == 0:
		return fmt.Sprintf("%gM", v/1e6)
	case av >= 1e3 && math.Mod(av, 1e3) == 0:
		return fmt.Sprintf("%gk", v/1e3)
	case av == 0 || av >= 100:
		return fmt.Sprintf("%.0f", v)
	case av >= 1:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// WriteSVG writes p as a standalone SVG document.
func (p *Plot) WriteSVG(w io.Writer) error {
	var xs, ys []float64
	for _, l := range p.Series {
		for _, pt := range l.Points {
			xs, ys = append(xs, pt.X), append(ys, pt.Y)
		}
	}
	ax, ay := newAxis(xs, p.LogX, innerW), newAxis(ys, p.LogY, innerH)
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	esc := html.EscapeString
	f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="%d">`+"\n",
		plotW, plotH, plotW, plotH, fontFamily, fontSize)
	f(`<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	f(`<text x="%d" y="%d" font-size="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", plotW/2, marginT-16, titleSize, labelColour, esc(p.Title))
	x0, y0 := float64(marginL), float64(marginT+innerH)
	for _, t := range ax.ticks() {
		x, _ := ax.at(t)
		f(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x0+x, marginT, x0+x, y0, gridColour)
		f(`<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s">%s</text>`+"\n", x0+x, y0+16, labelColour, tickLabel(t))
	}
	for _, t := range ay.ticks() {
		y, _ := ay.at(t)
		f(`<line x1="%.1f" y1="%.1f" x2="%d" y2="%.1f" stroke="%s"/>`+"\n", x0, y0-y, marginL+innerW, y0-y, gridColour)
		f(`<text x="%.1f" y="%.1f" text-anchor="end" fill="%s">%s</text>`+"\n", x0-6, y0-y+4, labelColour, tickLabel(t))
	}
	f(`<path d="M%.1f %d V%.1f H%d" fill="none" stroke="%s"/>`+"\n", x0, marginT, y0, marginL+innerW, axisColour)
	scale := func(log bool) string {
		if log {
			return ", log scale"
		}
		return ""
	}
	f(`<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%s</text>`+"\n", x0+innerW/2, plotH-14, labelColour, esc(p.XLabel+scale(p.LogX)))
	f(`<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle" fill="%s">%s</text>`+"\n", float64(marginT)+innerH/2, labelColour, esc(p.YLabel+scale(p.LogY)))
	for i, l := range p.Series {
		c := colours[i%len(colours)]
		var pts []string
		for _, pt := range l.Points {
			x, okx := ax.at(pt.X)
			y, oky := ay.at(pt.Y)
			if okx && oky {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x0+x, y0-y))
			}
		}
		f(`<g class="series" fill="%s" stroke="%s"><title>%s</title>`+"\n", c, c, esc(l.Name))
		if len(pts) > 1 {
			f(`<polyline points="%s" fill="none" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
		}
		for _, pt := range pts {
			x, y, _ := strings.Cut(pt, ",")
			f(`<circle cx="%s" cy="%s" r="%.1f"/>`+"\n", x, y, pointRadius)
		}
		f("</g>\n")
		ly := marginT + 4 + i*legendDY
		f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", marginL+10, ly, marginL+30, ly, c)
		f(`<text x="%d" y="%d" fill="%s">%s</text>`+"\n", marginL+36, ly+4, labelColour, esc(l.Name))
	}
	f("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
