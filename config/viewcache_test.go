package config_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/config"
)

func TestViewCacheSize(t *testing.T) {
	f, err := config.Parse([]byte("view_cache_size: 10\n"), nil)
	if err != nil || f.ViewCacheSize != 10 {
		t.Fatalf("view_cache_size: 10 gave %d, %v", f.ViewCacheSize, err)
	}
	_, err = config.Parse([]byte("view_cache_size: -1\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "view_cache_size: must not be negative") {
		t.Fatalf("a negative size: %v", err)
	}
}
