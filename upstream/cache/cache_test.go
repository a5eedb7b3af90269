package cache_test

import (
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/cache"
)

func TestClassOf(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		a       *mcp.ToolAnnotations
		trusted bool
		want    legate.Class
	}{
		{nil, true, legate.ClassWrite},
		{nil, false, legate.ClassWrite},
		{&mcp.ToolAnnotations{ReadOnlyHint: true}, true, legate.ClassRead},
		{&mcp.ToolAnnotations{ReadOnlyHint: true}, false, legate.ClassWrite},
		{&mcp.ToolAnnotations{DestructiveHint: &yes}, true, legate.ClassDestructive},
		{&mcp.ToolAnnotations{DestructiveHint: &yes}, false, legate.ClassDestructive},
		{&mcp.ToolAnnotations{DestructiveHint: &no}, true, legate.ClassWrite},
		{&mcp.ToolAnnotations{}, true, legate.ClassWrite},
	}
	for i, tc := range tests {
		if got := cache.ClassOf(tc.a, tc.trusted); got != tc.want {
			t.Errorf("%d: ClassOf(%+v, %v) = %s, want %s", i, tc.a, tc.trusted, got, tc.want)
		}
	}
}

// A resource URI two upstreams offer is reported on each, naming the other;
// one only a single upstream offers is not.
func TestSharedURIs(t *testing.T) {
	all := map[string]store.UpstreamCache{
		"a": {Resources: []string{"file:///x", "file:///only-a"}},
		"b": {Resources: []string{"file:///x"}},
		"c": {},
	}
	got := cache.SharedURIs([]string{"a", "b", "c"}, all)
	want := map[string][]string{"a": {"file:///x (also [b])"}, "b": {"file:///x (also [a])"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SharedURIs = %v, want %v", got, want)
	}
}
