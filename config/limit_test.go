package config_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/config"
)

// max_result_bytes, top-level and per upstream: read as bytes, never negative.
func TestMaxResultBytes(t *testing.T) {
	cases := map[string]struct {
		yaml    string
		wantErr string
	}{
		"both set":          {"max_result_bytes: 1048576\nupstreams:\n  - {id: a, command: [x], max_result_bytes: 2048}\n", ""},
		"negative default":  {"max_result_bytes: -1\n", "max_result_bytes: must not be negative"},
		"negative upstream": {"upstreams:\n  - {id: a, command: [x], max_result_bytes: -5}\n", "upstreams[0].max_result_bytes: must not be negative"},
		"not a number":      {"max_result_bytes: lots\n", "max_result_bytes"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := config.Parse([]byte(c.yaml), env(nil))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case c.wantErr == "" && (f.MaxResultBytes != 1<<20 || f.Upstreams[0].MaxResultBytes != 2048):
				t.Fatalf("read %d and %d", f.MaxResultBytes, f.Upstreams[0].MaxResultBytes)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
		})
	}
}
