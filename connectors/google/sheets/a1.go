package sheets

import (
	"strconv"
	"strings"
)

// a1 is a range in A1 notation, split: Sheet1!A2:D, 'My sheet'!3:10, B1.
// A range that is not one (a sheet's or a named range's name alone) has
// ok false and is read whole.
type a1 struct {
	sheet      string // with its quotes, "" when not given
	col0, col1 string // "" for every column
	row0, row1 int    // 0 for open: from the first row, to the last
	ok         bool
}

// parseA1 splits r. A range without "!" is cells of the first sheet when
// it looks like cells (A1:C3), else a name, read whole.
func parseA1(r string) a1 {
	sheet, part := "", r
	if i := strings.LastIndexByte(r, '!'); i >= 0 {
		sheet, part = r[:i], r[i+1:]
	}
	from, to, colon := strings.Cut(part, ":")
	c0, r0, ok0 := splitCell(from)
	c1, r1, ok1 := c0, r0, true // one cell, or one row
	if colon {
		c1, r1, ok1 = splitCell(to)
	}
	out := a1{sheet: sheet, col0: c0, row0: r0, col1: c1, row1: r1, ok: true}
	switch {
	case !ok0 || !ok1,
		out.col0 == "" && out.row0 == 0,      // ":" or nothing
		(out.col0 == "") != (out.col1 == ""), // A1:7
		out.row1 != 0 && out.row1 < out.row0,
		out.col0 == "" && (out.row0 == 0 || out.row1 == 0): // rows need both ends: 3:10
		return a1{}
	}
	return out
}

// splitCell splits a cell reference (B12, B, 12 or "") into its column
// letters, upper-cased, and row number (0 for none); ok is false for
// anything else.
func splitCell(s string) (col string, row int, ok bool) {
	i := 0
	for i < len(s) && i < 3 && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z') {
		i++
	}
	col, digits := s[:i], s[i:]
	if len(digits) > 7 {
		return "", 0, false
	}
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return "", 0, false
		}
		row = row*10 + int(digits[j]-'0')
	}
	return strings.ToUpper(col), row, true
}

// first is the number of the range's first row.
func (a a1) first() int { return max(a.row0, 1) }

// firstColumn is the letters of the range's first column: A when it
// names none (rows, or a name).
func (a a1) firstColumn() string {
	if a.col0 == "" {
		return "A"
	}
	return a.col0
}

// window returns the range of the n rows from the offset-th (0 for the
// first) of a, and the number of its first row; ok is false past a's
// last row.
func (a a1) window(offset, n int) (string, int, bool) {
	first := a.first() + offset
	last := first + n - 1
	if a.row1 > 0 {
		if first > a.row1 {
			return "", 0, false
		}
		last = min(last, a.row1)
	}
	return a.cells(first, last), first, true
}

// cells is a's columns on rows first to last, with a's sheet.
func (a a1) cells(first, last int) string {
	s := a.col0 + strconv.Itoa(first) + ":" + a.col1 + strconv.Itoa(last)
	if a.sheet != "" {
		return a.sheet + "!" + s
	}
	return s
}

// rowsRange is the range of rows first to last, of width cells from a's
// first column (A when a has none).
func (a a1) rowsRange(first, last, width int) string {
	c0 := a.firstColumn()
	c1 := columnName(columnNumber(c0) + max(width, 1) - 1)
	s := c0 + strconv.Itoa(first) + ":" + c1 + strconv.Itoa(last)
	if a.sheet != "" {
		return a.sheet + "!" + s
	}
	return s
}

// columnNumber is the number of a column's letters: A 1, Z 26, AA 27.
func columnNumber(col string) int {
	n := 0
	for _, c := range strings.ToUpper(col) {
		n = n*26 + int(c-'A'+1)
	}
	return n
}

// columnName is the letters of column n (from 1).
func columnName(n int) string {
	var b []byte
	for ; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('A' + (n-1)%26)}, b...)
	}
	return string(b)
}
