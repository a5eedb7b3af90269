package upstream

import (
	"github.com/legate-mcp/legate/upstream/cache"
	"github.com/legate-mcp/legate/upstream/upconfig"
)

// An upstream's definition is package upconfig's; its names are given here
// too, so that what configures upstreams speaks of upstream.Config.

type (
	// Config is one upstream MCP server (upconfig.Config).
	Config = upconfig.Config
)

// SessionPerClient is the session mode of an upstream whose sessions are
// its clients' own (package upconfig has the others, and the defaults).
const SessionPerClient = upconfig.SessionPerClient

// An upstream's cached tools are package cache's.
type (
	// Tool is one cached upstream tool, as the catalog receives it.
	Tool = cache.Tool
	// Quarantined is a tool whose definition differs from its pin.
	Quarantined = cache.Quarantined
	// Diff is what a refresh changed in one upstream's tools.
	Diff = cache.Diff
)
