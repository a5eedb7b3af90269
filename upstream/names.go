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
	// ToolFilter selects tools by glob on their upstream names.
	ToolFilter = upconfig.ToolFilter
)

// The modes and defaults of a Config (package upconfig).
const (
	AuthOAuth              = upconfig.AuthOAuth
	PinTOFU                = upconfig.PinTOFU
	PinStrict              = upconfig.PinStrict
	SessionShared          = upconfig.SessionShared
	SessionPerClient       = upconfig.SessionPerClient
	DefaultTimeout         = upconfig.DefaultTimeout
	DefaultMaxConcurrency  = upconfig.DefaultMaxConcurrency
	DefaultProtocolVersion = upconfig.DefaultProtocolVersion
	DefaultMaxResultBytes  = upconfig.DefaultMaxResultBytes
)

// ErrHeaderEnv is wrapped by the error of an upstream whose header_env
// names an unset or empty environment variable.
var ErrHeaderEnv = upconfig.ErrHeaderEnv

// An upstream's cached tools are package cache's.
type (
	// Tool is one cached upstream tool, as the catalog receives it.
	Tool = cache.Tool
	// Quarantined is a tool whose definition differs from its pin.
	Quarantined = cache.Quarantined
	// Diff is what a refresh changed in one upstream's tools.
	Diff = cache.Diff
)
