// Package upstream connects Legate to upstream MCP servers — remote
// (Streamable HTTP, SSE) or local (stdio) — whose tools it discovers,
// caches and re-exports as mcp.<upstream-id>.<tool>.
package upstream
