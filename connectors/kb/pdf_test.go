package kb_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// buildPDF writes a PDF 1.4 file by hand: one Helvetica font, each line
// shown on its own (an empty line is a paragraph break), one page per
// element of pages, the title in the document information dictionary.
func buildPDF(title string, pages [][]string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	esc := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	kids := make([]string, len(pages))
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 5+2*i)
	}
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	obj(fmt.Sprintf("<< /Title (%s) /Producer (legate kb test) >>", esc.Replace(title)))
	for i, lines := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 10 Tf 13 TL 56 790 Td\n")
		for _, l := range lines {
			if l != "" {
				fmt.Fprintf(&content, "(%s) Tj ", esc.Replace(l))
			}
			content.WriteString("T*\n")
		}
		content.WriteString("ET")
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 6+2*i))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// buildingAccess is the corpus's PDF: two pages.
func buildingAccess() []byte {
	return buildPDF("Building access and fire safety", [][]string{{
		"Building access and fire safety",
		"",
		"Badges",
		"",
		"Every employee receives a personal access badge on their first day. The badge",
		"opens the main entrance, the lifts and the floors of your department.",
		"",
		"A lost badge must be reported to facilities the same day, so that it can be",
		"blocked at once. A replacement badge costs 15 EUR, deducted from payroll.",
		"",
		"Never lend your badge to anyone, not even a colleague who forgot theirs.",
	}, {
		"Fire safety",
		"",
		"When the fire alarm sounds, leave the building by the nearest staircase and never",
		"use the lifts. The assembly point is the car park across the canal.",
		"",
		"Each floor has two fire wardens, who check the rooms and report to the head",
		"warden at the assembly point. Fire drills are held twice a year and announced",
		"one day ahead.",
	}})
}

// TestPDFFixture: the corpus's PDF is the one buildPDF writes (-update
// writes it).
func TestPDFFixture(t *testing.T) {
	p := filepath.Join("testdata", "corpus", "office", "building-access.pdf")
	want := buildingAccess()
	if *update {
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what buildPDF writes: run go test -run TestPDFFixture -update", p)
	}
}
