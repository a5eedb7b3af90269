package main

import "fmt"

// plural counts n of a noun for people: "1 tool", "2 tools", "0 tools".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
