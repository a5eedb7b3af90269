package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Fields writes one record for people: a name and a value a line.
func Fields(w io.Writer, fields [][2]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

// OrDash is s, or "-" for nothing.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// LocalTime is t in the local zone, to the second.
func LocalTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// Ago is LocalTime(t), or "never" for the zero time.
func Ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return LocalTime(t)
}

// OneLine is s on one line, cut to n characters.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n-3] + "..."
	}
	return s
}

// Plural counts n of a noun for people: "1 tool", "2 tools", "0 tools".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Pretty indents JSON for reading; invalid JSON is shown as it is.
func Pretty(b []byte) []string {
	if len(b) == 0 {
		return []string{"(never accepted)"}
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		b, _ = json.MarshalIndent(v, "", "  ")
	}
	return strings.Split(string(b), "\n")
}

// SideBySide prints two texts in columns, aligned on their common lines
// (a longest-common-subsequence line diff); changed lines are marked |,
// lines only on one side < or >.
func SideBySide(w io.Writer, a, b []string) {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	const width = 60
	row := func(l, mark, r string) {
		if len(l) > width {
			l = l[:width-1] + "…"
		}
		fmt.Fprintf(w, "  %-*s %s %s\n", width, l, mark, r)
	}
	row("ACCEPTED", " ", "NOW")
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			row(a[i], " ", b[j])
			i, j = i+1, j+1
		case i < len(a) && j < len(b) && lcs[i+1][j] == lcs[i][j+1]:
			row(a[i], "|", b[j])
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			row("", ">", b[j])
			j++
		default:
			row(a[i], "<", "")
			i++
		}
	}
}
