package dial

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A stdio upstream's stderr is logged a line at a time on the upstream's
// logger, which names the upstream once.
func TestStderrLinesNameTheUpstreamOnce(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil)).With("upstream", "ev")
	l := &LineLogger{Log: log}
	l.Write([]byte("first line\nsecond "))
	l.Write([]byte("line\r\n\n"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(lines), out.String())
	}
	for i, want := range []string{`line="first line"`, `line="second line"`} {
		if strings.Count(lines[i], "upstream=ev") != 1 || !strings.Contains(lines[i], want) {
			t.Errorf("log line %d: %s", i, lines[i])
		}
	}
}
