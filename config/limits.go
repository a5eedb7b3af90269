package config

import (
	"fmt"
	pathpkg "path"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Limits is the `limits:` section: how many calls the gateway lets
// through, per principal and per tool, before it answers RATE_LIMITED
// with the time to wait. Each limit is a token bucket: per_second calls
// on average, burst at once. Every limit is off (0) by default.
type Limits struct {
	PerPrincipal Rate        `yaml:"per_principal" desc:"Calls each principal (of each tenant) may make, to all tools together"`
	PerTool      Rate        `yaml:"per_tool" desc:"Calls each tool may take, from all principals together, unless a rule of tools matches it"`
	Tools        []ToolLimit `yaml:"tools" desc:"Limits of the tools matching a glob, each tool on its own, instead of per_tool; the first matching rule applies"`
	CacheSize    int         `yaml:"cache_size" default:"10000" min:"1" desc:"How many principals and tools have their limit's state kept; the least recently used is dropped, and starts again with a full burst"`
}

// Rate is one limit: per_second calls on average, burst at once.
type Rate struct {
	PerSecond float64 `yaml:"per_second" min:"0" desc:"Calls per second allowed on average; 0 means no limit"`
	Burst     int     `yaml:"burst" min:"0" desc:"Calls allowed at once before the rate applies; 0 means 1"`
}

// ToolLimit is one rule of limits.tools.
type ToolLimit struct {
	Match     string  `yaml:"match" required:"true" example:"slack.*" desc:"Glob (path.Match syntax) over canonical tool names"`
	PerSecond float64 `yaml:"per_second" min:"0" desc:"Calls per second each matching tool takes on average; 0 means no limit"`
	Burst     int     `yaml:"burst" min:"0" desc:"Calls each matching tool takes at once before the rate applies; 0 means 1"`
}

// Rate is the rule's limit.
func (t ToolLimit) Rate() Rate { return Rate{PerSecond: t.PerSecond, Burst: t.Burst} }

// On reports whether the section sets any limit.
func (l *Limits) On() bool {
	if l.PerPrincipal.PerSecond > 0 || l.PerTool.PerSecond > 0 {
		return true
	}
	for _, t := range l.Tools {
		if t.PerSecond > 0 {
			return true
		}
	}
	return false
}

// validate checks what the tags cannot: the rules' globs.
func (l *Limits) validate(path string) []error {
	var errs []error
	for i, t := range l.Tools {
		if _, err := pathpkg.Match(t.Match, ""); err != nil {
			errs = append(errs, &strictyaml.PathError{Path: fmt.Sprintf("%s.tools[%d].match", path, i), Msg: fmt.Sprintf("bad glob %q", t.Match)})
		}
	}
	return errs
}
