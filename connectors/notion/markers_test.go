package notion_test

import (
	"fmt"
	"strings"
	"testing"
)

// stored is every text the stand-in holds: titles, properties, blocks
// and comments.
func (s *standin) stored() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.pages {
		out = append(out, p.title, fmt.Sprint(p.props))
	}
	for _, bs := range s.children {
		for _, b := range bs {
			out = append(out, b.text)
		}
	}
	for _, c := range s.comments {
		out = append(out, c.text)
	}
	return out
}

// markersIn counts the stored texts that carry a marker.
func (s *standin) markersIn() int {
	n := 0
	for _, text := range s.stored() {
		if strings.Contains(text, "legate-operation") || strings.Contains(text, "lg1-") {
			n++
		}
	}
	return n
}

// With markers off (the default), no write leaves a marker in Notion,
// whether its answer came or was lost and reconciled.
func TestNoMarkerIsLeftWithMarkersOff(t *testing.T) {
	for tool, tc := range writeTools(t) {
		t.Run(tool, func(t *testing.T) {
			f := newOnceFixture(t, 20, tool)
			loseAndRetry(t, f, tool, tc, 20, "")
			if n := f.s.markersIn(); n != 0 {
				t.Fatalf("%d stored texts carry a marker", n)
			}
		})
	}
}

// With markers on, the writes that create content carry the marker, and
// a lost answer is still reconciled (by it) without a second write.
func TestMarkersOnStillReconcile(t *testing.T) {
	want := map[string]int{"create_page": 20, "append_block": 20, "append_markdown": 20, "add_comment": 20}
	for tool, tc := range writeTools(t) {
		t.Run(tool, func(t *testing.T) {
			f := newOnceFixture(t, 20, tool)
			loseAndRetry(t, f, tool, tc, 20, "markers: true")
			if n := f.s.markersIn(); n != want[tool] {
				t.Fatalf("%d stored texts carry a marker; want %d", n, want[tool])
			}
		})
	}
}
