package curvebench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// at is f measured at 1,000, 10,000 and 100,000.
func at(f func(n float64) float64) []Point {
	var pts []Point
	for _, n := range []float64{1e3, 1e4, 1e5} {
		pts = append(pts, Point{n, f(n)})
	}
	return pts
}

func TestGrowthReadsTheClass(t *testing.T) {
	for _, c := range []struct {
		name    string
		f       func(n float64) float64
		inverse bool
		want    string
	}{
		{"constant", func(float64) float64 { return 3 }, false, Constant},
		{"constant with a little noise", func(n float64) float64 { return 3 + math.Log10(n)/50 }, false, Constant},
		{"log", func(n float64) float64 { return math.Log2(n) }, false, Log},
		{"log with a small constant part", func(n float64) float64 { return 1 + math.Log2(n) }, false, Log},
		{"square root", func(n float64) float64 { return math.Sqrt(n) }, false, Linear},
		{"linear", func(n float64) float64 { return 0.01 * n }, false, Linear},
		{"linear with a constant part", func(n float64) float64 { return 50 + 0.01*n }, false, Linear},
		{"n log n", func(n float64) float64 { return n * math.Log2(n) }, false, Linear},
		{"quadratic", func(n float64) float64 { return n * n }, false, Superlinear},
		{"a rate that stays", func(float64) float64 { return 2000 }, true, Constant},
		{"a rate halving per decade", func(n float64) float64 { return 2000 / math.Pow(2, math.Log10(n)) }, true, Log},
		{"a rate falling as 1/n", func(n float64) float64 { return 1e6 / n }, true, Linear},
	} {
		if _, got := Growth(at(c.f), c.inverse); got != c.want {
			r, _ := Growth(at(c.f), c.inverse)
			t.Errorf("%s: read as %s (%.2f× per decade), want %s", c.name, got, r, c.want)
		}
	}
}

func TestGrowthPerDecade(t *testing.T) {
	r, _ := Growth([]Point{{100, 2}, {1000, 20}, {10000, 200}}, false)
	if math.Abs(r-10) > 1e-9 {
		t.Errorf("linear cost per 10× work: %v, want 10", r)
	}
	r, _ = Growth([]Point{{1000, 4}, {100000, 16}}, false)
	if math.Abs(r-2) > 1e-9 {
		t.Errorf("4 to 16 over two decades: %v per decade, want 2", r)
	}
	// The last decade is read: a constant part that hides the growth at
	// small work weighs least there.
	if r, class := Growth([]Point{{1000, 1}, {10000, 1}, {100000, 10}}, false); math.Abs(r-10) > 1e-9 || class != Linear {
		t.Errorf("flat, then 10× over the last decade: read as %v (%s), want 10 (linear)", r, class)
	}
	if r, class := Growth([]Point{{1000, 4}}, false); !math.IsNaN(r) || class != "" {
		t.Errorf("one point read as %v %q", r, class)
	}
}

func TestTableMarksFasterThanExpectedOnlyWhenJudged(t *testing.T) {
	c := Curve{ID: "x", Title: "X", Work: "tools", LogX: true, Metrics: []Metric{
		{Name: "should be log", Unit: "ms", Expect: Log, Points: at(func(n float64) float64 { return n / 1000 })},
		{Name: "is constant", Unit: "ms", Expect: Log, Points: at(func(float64) float64 { return 1 })},
	}}
	var judged, smoke bytes.Buffer
	c.table(&judged, true)
	c.table(&smoke, false)
	lines := strings.Split(judged.String(), "\n")
	var slow, flat string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "| should be log"):
			slow = l
		case strings.HasPrefix(l, "| is constant"):
			flat = l
		}
	}
	if !strings.Contains(slow, "faster than expected") || !strings.Contains(slow, "10.00×") {
		t.Errorf("a linear row expected log is not marked:\n%s", slow)
	}
	if strings.Contains(flat, "faster") {
		t.Errorf("a constant row is marked:\n%s", flat)
	}
	if strings.Contains(smoke.String(), "faster") {
		t.Errorf("a smoke run's table judges:\n%s", smoke.String())
	}
	if !strings.Contains(judged.String(), "| 1k tools | 10k tools | 100k tools |") {
		t.Errorf("no column per work measured:\n%s", judged.String())
	}
}
