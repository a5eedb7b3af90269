package connectors

import (
	"fmt"
	"sort"
	"sync"
)

// Builtin is a tool every gateway serves without configuration, named
// <Instance>.<Tool.Name> like an instance's tool (http.request). A type
// package registers it from init, beside its type, so the gateway serves
// it without importing the package: the binary's connectors/all decides
// which built-in tools exist.
type Builtin struct {
	// Instance is the first part of the tool's canonical name, usually
	// the registering type's name.
	Instance string
	// Tool is the tool. It runs without credentials.
	Tool Tool
}

// Canonical is the built-in tool's canonical name.
func (b Builtin) Canonical() string { return b.Instance + "." + b.Tool.Name }

var (
	builtinMu sync.RWMutex
	builtins  = map[string]Builtin{}
)

// RegisterBuiltin adds a built-in tool. It panics on an invalid instance
// name, an invalid tool, or a canonical name registered twice.
func RegisterBuiltin(b Builtin) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if !typeName.MatchString(b.Instance) {
		panic(fmt.Sprintf("connectors: built-in tool: invalid instance name %q", b.Instance))
	}
	if err := CheckTools([]Tool{b.Tool}); err != nil {
		panic(fmt.Sprintf("connectors: built-in tool %s: %v", b.Canonical(), err))
	}
	if _, dup := builtins[b.Canonical()]; dup {
		panic(fmt.Sprintf("connectors: built-in tool %s registered twice", b.Canonical()))
	}
	builtins[b.Canonical()] = b
}

// Builtins returns the registered built-in tools, sorted by canonical name.
func Builtins() []Builtin {
	builtinMu.RLock()
	defer builtinMu.RUnlock()
	out := make([]Builtin, 0, len(builtins))
	for _, b := range builtins {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Canonical() < out[j].Canonical() })
	return out
}
