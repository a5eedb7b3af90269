package sheets

import (
	"fmt"
	"testing"
)

func TestParseA1(t *testing.T) {
	tests := map[string]struct {
		rng  string
		want string // the window of 10 rows from offset 5, its first row; "name" when read whole
	}{
		"cells":               {"Sheet1!A1:D50", "Sheet1!A6:D15 6"},
		"open rows":           {"Sheet1!A:D", "Sheet1!A6:D15 6"},
		"from a row":          {"Sheet1!B3:C", "Sheet1!B8:C17 8"},
		"rows":                {"Sheet1!3:12", "Sheet1!8:12 8"},
		"lower case":          {"Sheet1!a2:c", "Sheet1!A7:C16 7"},
		"quoted sheet":        {"'My sheet!'!A1:B", "'My sheet!'!A6:B15 6"},
		"first sheet's cells": {"A1:C20", "A6:C15 6"},
		"one cell":            {"Sheet1!C4", "past"},
		"a sheet's name":      {"Sheet1", "name"},
		"a named range":       {"Totals", "name"},
		"half a range":        {"Sheet1!A1:7", "name"},
		"reversed rows":       {"Sheet1!A9:B2", "name"},
		"open rows, no cols":  {"Sheet1!3:", "name"},
		"nothing":             {"Sheet1!", "name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := parseA1(tc.rng)
			got := "name"
			if a.ok {
				w, first, ok := a.window(5, 10)
				got = fmt.Sprintf("%s %d", w, first)
				if !ok {
					got = "past"
				}
			}
			if got != tc.want {
				t.Errorf("parseA1(%q).window(5, 10) = %s; want %s", tc.rng, got, tc.want)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	for n, name := range map[int]string{1: "A", 26: "Z", 27: "AA", 52: "AZ", 53: "BA", 702: "ZZ", 703: "AAA", 18278: "ZZZ"} {
		if got := columnName(n); got != name {
			t.Errorf("columnName(%d) = %s; want %s", n, got, name)
		}
		if got := columnNumber(name); got != n {
			t.Errorf("columnNumber(%s) = %d; want %d", name, got, n)
		}
	}
	if got := parseA1("Sheet1!C:E").rowsRange(7, 7, 3); got != "Sheet1!C7:E7" {
		t.Errorf("rowRange %s", got)
	}
}
