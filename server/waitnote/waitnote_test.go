package waitnote_test

import (
	"testing"

	"github.com/legate-mcp/legate/server/waitnote"
)

func TestPanelURL(t *testing.T) {
	for addr, want := range map[string]string{
		"":               "",
		"127.0.0.1:8081": "http://127.0.0.1:8081/inbox",
		":8081":          "http://localhost:8081/inbox",
		"0.0.0.0:8081":   "http://localhost:8081/inbox",
		"[::1]:8081":     "http://[::1]:8081/inbox",
		"not an address": "",
	} {
		if got := waitnote.PanelURL(addr); got != want {
			t.Errorf("PanelURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
