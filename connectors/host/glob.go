package host

import (
	"regexp"
	"strings"

	"github.com/legate-mcp/legate"
)

// globRegexp compiles a glob over slash-separated relative paths: * and ?
// match within one name, ** any number of whole names ("**/" may match
// none), everything else itself.
func globRegexp(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern is empty")
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch ch := pattern[i]; {
		case strings.HasPrefix(pattern[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			b.WriteString(".*")
			i++
		case ch == '*':
			b.WriteString("[^/]*")
		case ch == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// grepRegexp compiles an RE2 expression, a failure being the caller's.
func grepRegexp(pattern string, ignoreCase bool) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern is empty")
	}
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: pattern: %v", err)
	}
	return re, nil
}
