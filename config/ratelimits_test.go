package config_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/config"
)

func TestLimits(t *testing.T) {
	f, err := config.Parse([]byte("limits:\n  per_principal: {per_second: 0.5, burst: 2}\n  tools:\n    - {match: \"slack.*\", per_second: 1, burst: 5}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := f.Limits; l.PerPrincipal.PerSecond != 0.5 || l.PerPrincipal.Burst != 2 || l.Tools[0].Rate() != (config.Rate{PerSecond: 1, Burst: 5}) || l.CacheSize != 10000 || !l.On() {
		t.Fatalf("got %+v", l)
	}
	if f, _ := config.Parse(nil, nil); f.Limits.On() {
		t.Fatal("limits are on by default")
	}
}

func TestLimitsValidation(t *testing.T) {
	doc := `limits:
  per_principal: {per_second: -1, burst: 1}
  per_tool: {per_second: 1, burst: -2}
  tools:
    - {match: "[", per_second: -0.5}
    - {per_second: 1}
  cache_size: -1
`
	_, err := config.Parse([]byte(doc), nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"limits.per_principal.per_second: must not be negative",
		"limits.per_tool.burst: must not be negative",
		"limits.tools[0].per_second: must not be negative",
		`limits.tools[0].match: bad glob "["`,
		"limits.tools[1].match: is required",
		"limits.cache_size: must be at least 1",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
}
