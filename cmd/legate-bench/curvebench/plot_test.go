package curvebench

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// parsed is what the test reads back from an SVG: each series' title and
// the centres of its dots.
type parsed struct {
	root   string
	series map[string][][2]float64
}

func parseSVG(t *testing.T, svg []byte) parsed {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	p := parsed{series: map[string][][2]float64{}}
	var group string
	var inTitle bool
	var pts [][2]float64
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, svg)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if p.root == "" {
				p.root = e.Name.Space + " " + e.Name.Local
			}
			attr := func(name string) string {
				for _, a := range e.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch e.Name.Local {
			case "g":
				if attr("class") == "series" {
					group, pts = "?", nil
				}
			case "title":
				inTitle = group != ""
			case "circle":
				if group == "" {
					t.Fatal("a dot outside any series")
				}
				x, err1 := strconv.ParseFloat(attr("cx"), 64)
				y, err2 := strconv.ParseFloat(attr("cy"), 64)
				if err1 != nil || err2 != nil {
					t.Fatalf("dot at (%q, %q)", attr("cx"), attr("cy"))
				}
				pts = append(pts, [2]float64{x, y})
			}
		case xml.CharData:
			if inTitle {
				group = string(e)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "title":
				inTitle = false
			case "g":
				if group != "" {
					p.series[group] = pts
					group = ""
				}
			}
		}
	}
	return p
}

func render(t *testing.T, p Plot) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPlotIsSVGWithOneDotPerValue(t *testing.T) {
	p := Plot{Title: "tools/list <p50> & p99", XLabel: "tools", YLabel: "ms", LogX: true, LogY: true, Series: []Line{
		{Name: "p50", Points: []Point{{1000, 1.5}, {10000, 14}, {100000, 160}}},
		{Name: "p99 \"tail\"", Points: []Point{{1000, 3}, {10000, 30}, {100000, 400}}},
		{Name: "one", Points: []Point{{10000, 2}}},
	}}
	got := parseSVG(t, render(t, p))
	if got.root != "http://www.w3.org/2000/svg svg" {
		t.Fatalf("root element %q, want svg in the SVG namespace", got.root)
	}
	if len(got.series) != len(p.Series) {
		t.Fatalf("%d series drawn, want %d: %v", len(got.series), len(p.Series), got.series)
	}
	for _, l := range p.Series {
		if n := len(got.series[l.Name]); n != len(l.Points) {
			t.Errorf("series %q: %d dots, want one per value (%d)", l.Name, n, len(l.Points))
		}
	}
	// Larger work is further right, larger cost higher up (smaller y).
	dots := got.series["p50"]
	for i := 1; i < len(dots); i++ {
		if dots[i][0] <= dots[i-1][0] || dots[i][1] >= dots[i-1][1] {
			t.Errorf("p50 dots %v and %v are not right of and above each other", dots[i-1], dots[i])
		}
	}
	// On a log axis a decade is the same width wherever it is.
	if d1, d2 := dots[1][0]-dots[0][0], dots[2][0]-dots[1][0]; math.Abs(d1-d2) > 0.2 {
		t.Errorf("decades %.1f and %.1f wide on the log x axis", d1, d2)
	}
}

func TestPlotLinearAxesStartAtZero(t *testing.T) {
	p := Plot{Title: "audit", XLabel: "minutes", YLabel: "MiB", Series: []Line{
		{Name: "file", Points: []Point{{0, 0.1}, {1, 10}, {2, 20}, {3, 20}}},
	}}
	dots := parseSVG(t, render(t, p)).series["file"]
	if len(dots) != 4 {
		t.Fatalf("%d dots, want 4", len(dots))
	}
	if dots[0][0] != marginL {
		t.Errorf("x = 0 drawn at %.1f, want the axis, %d", dots[0][0], marginL)
	}
	if dots[2][1] != dots[3][1] {
		t.Errorf("equal values drawn at different heights: %v", dots)
	}
	// Equal steps of work, equal steps on a linear axis.
	if d1, d2 := dots[2][0]-dots[1][0], dots[3][0]-dots[2][0]; math.Abs(d1-d2) > 0.2 {
		t.Errorf("steps %.1f and %.1f wide on the linear x axis", d1, d2)
	}
}

func TestPlotEscapesText(t *testing.T) {
	svg := string(render(t, Plot{Title: "a < b & c", Series: []Line{{Name: "<x>", Points: []Point{{1, 1}}}}}))
	if strings.Contains(svg, "a < b") || !strings.Contains(svg, "a &lt; b &amp; c") {
		t.Errorf("title not escaped:\n%s", svg)
	}
}
