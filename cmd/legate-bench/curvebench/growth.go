package curvebench

import (
	"fmt"
	"math"
)

// The growth classes a curve's figures are read as, from their cost per
// 10× work (see Growth).
const (
	Constant    = "constant"
	Log         = "log"
	Linear      = "linear"
	Superlinear = "superlinear"
)

// The bounds of each class, as the cost's ratio per 10× work. A pure
// a·log n grows 1.25× from 10,000 to 100,000 and 1.2× from 100,000 to
// 1,000,000; n^0.5 grows 3.16×, n 10×, n^1.3 20×. Below 1.15× the growth
// cannot be told from a constant's noise on a shared machine.
const (
	constantBelow = 1.15
	logBelow      = 3.0
	linearBelow   = 20.0
)

// Growth reads the complexity off measured figures (ordered by work): the
// cost's ratio per 10× work over the last decade measured — from the
// first figure at a tenth of the largest work or more, else the first, to
// the last, where a constant part weighs least — and its class. With
// inverse, a figure is a rate (the work done per second): its cost is its
// inverse.
func Growth(pts []Point, inverse bool) (perDecade float64, class string) {
	if len(pts) < 2 {
		return math.NaN(), ""
	}
	first, last := pts[0], pts[len(pts)-1]
	for _, p := range pts[:len(pts)-1] {
		if p.X >= last.X/10*(1-1e-9) {
			first = p
			break
		}
	}
	decades := math.Log10(last.X / first.X)
	if decades <= 0 || first.Y <= 0 || last.Y <= 0 {
		return math.NaN(), ""
	}
	ratio := last.Y / first.Y
	if inverse {
		ratio = 1 / ratio
	}
	perDecade = math.Pow(ratio, 1/decades)
	switch {
	case perDecade < constantBelow:
		class = Constant
	case perDecade < logBelow:
		class = Log
	case perDecade < linearBelow:
		class = Linear
	default:
		class = Superlinear
	}
	return perDecade, class
}

// Exceeds reports whether class grows faster than expect, what a curve
// should show at most.
func Exceeds(class, expect string) bool {
	rank := map[string]int{Constant: 0, Log: 1, Linear: 2, Superlinear: 3}
	c, ok1 := rank[class]
	e, ok2 := rank[expect]
	return ok1 && ok2 && c > e
}

// format renders v in unit as the harness's tables do.
func format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch unit {
	case "ms":
		if v < 1 {
			return fmt.Sprintf("%.0f µs", v*1000)
		}
		if v < 10 {
			return fmt.Sprintf("%.2f ms", v)
		}
		return fmt.Sprintf("%.1f ms", v)
	case "µs":
		return fmt.Sprintf("%.0f µs", v)
	case "calls/s", "":
		return fmt.Sprintf("%.0f", v)
	case "B":
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// count writes a work figure shortly: 1,000 → 1k, 1,100 → 1.1k.
func count(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e6) == 0:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3 && math.Mod(v, 100) == 0:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}
