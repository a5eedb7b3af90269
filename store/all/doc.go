// Package all imports every store backend, each registering its URL scheme
// with store.Register. A binary imports it for its side effect:
//
//	import _ "github.com/legate-mcp/legate/store/all"
//
// One file per backend: adding a backend adds a file here and touches
// nothing else.
package all
