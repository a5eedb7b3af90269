package resultcut

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// notice is the text that says what a cut dropped and how to read the whole.
func (c *cutter) notice(d dropped) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[legate: result cut to fit its budget of %s tokens (the whole is ~%s).", num(c.budget), num(c.total))
	if t := d.text; t != nil {
		if t.lines > 0 {
			fmt.Fprintf(&b, " Here %s lines are cut (%s bytes, ~%s tokens).", num(t.lines), num(t.bytes), num(t.tokens))
		} else {
			fmt.Fprintf(&b, " Here %s bytes are cut (~%s tokens).", num(t.bytes), num(t.tokens))
		}
	}
	if d.json.any() {
		fmt.Fprintf(&b, " Its JSON is trimmed, still valid: %s.", d.json)
	}
	switch {
	case d.noStruct:
		b.WriteString(" structuredContent is left out: even trimmed it does not fit.")
	case d.structured.any():
		fmt.Fprintf(&b, " structuredContent is trimmed, still valid: %s.", d.structured)
	}
	k := c.keep
	if k.Ref == "" {
		b.WriteString(" The whole result could not be kept.]")
		return b.String()
	}
	page := 1
	if d.text != nil && d.text.page > 0 {
		page = d.text.page
	}
	fmt.Fprintf(&b, " The whole result is kept for %s: read it", duration(k.Retention))
	if k.ReadTool != "" {
		fmt.Fprintf(&b, " with the tool %s {\"ref\":%q,\"page\":%d} (%s pages", k.ReadTool, k.Ref, page, num(len(c.pages)))
		if d.text != nil && d.text.page > 0 {
			fmt.Fprintf(&b, "; the cut part starts on page %d", d.text.page)
		}
		b.WriteString("), or")
	}
	fmt.Fprintf(&b, " as the resource %s%s (add ?page=N for one of its %s pages).", ResourcePrefix, k.Ref, num(len(c.pages)))
	if c.truncated {
		fmt.Fprintf(&b, " Only its first %s bytes are kept.", num(c.kept))
	}
	b.WriteString("]")
	return b.String()
}

// String says what trimming JSON cut.
func (j jsonCut) String() string {
	var parts []string
	if j.Arrays > 0 {
		parts = append(parts, fmt.Sprintf("%s arrays cut in the middle (%s items)", num(j.Arrays), num(j.Items)))
	}
	if j.Strings > 0 {
		parts = append(parts, fmt.Sprintf("%s strings shortened (%s bytes)", num(j.Strings), num(j.Bytes)))
	}
	return strings.Join(parts, ", ")
}

// num writes n with thousands separators.
func num(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// duration writes d in hours and minutes.
func duration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
