package config

import (
	"fmt"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Budgets is the `budgets:` section: how much each principal (of a tenant)
// and each tenant may use per window — calls, bytes of results, write
// calls — before a call fails QUOTA_EXCEEDED with the time its window
// ends. Budgets are counted in the store, so that replicas sharing one
// share them. Every budget is off (limit 0) by default.
type Budgets struct {
	PerPrincipal Budget `yaml:"per_principal" desc:"What each principal (of each tenant) may use, over all tools together"`
	PerTenant    Budget `yaml:"per_tenant" desc:"What each tenant's principals may use together (the callers without a tenant are one)"`
}

// Budget is what one principal or one tenant may use.
type Budget struct {
	Calls       Allowance `yaml:"calls" desc:"Calls made, counted when made (a call held for approval when it is held, not again when it runs); window default 1h"`
	ResultBytes Allowance `yaml:"result_bytes" desc:"Bytes of the calls' results, charged as each returns: calls are refused once they pass the limit, until the window ends; window default 1h"`
	Writes      Allowance `yaml:"writes" desc:"Calls of class write or destructive, counted as calls are; window default 24h (a UTC day)"`
}

// Allowance is one budget: limit per window.
type Allowance struct {
	Limit  int64           `yaml:"limit" min:"0" desc:"Most used per window; 0 means no budget"`
	Window legate.Duration `yaml:"window" min:"0" desc:"Length of the fixed windows the budget is counted in, aligned to UTC (24h is a UTC day), at most 744h (31 days)"`
}

// MaxBudgetWindow is the longest window a budget may have; counts older
// than it are pruned.
const MaxBudgetWindow = 744 * time.Hour

// On reports whether any budget is set.
func (b *Budgets) On() bool {
	for _, x := range []*Budget{&b.PerPrincipal, &b.PerTenant} {
		if x.Calls.Limit > 0 || x.ResultBytes.Limit > 0 || x.Writes.Limit > 0 {
			return true
		}
	}
	return false
}

// applyDefaults sets the windows left unset: 1h, 24h for writes.
func (b *Budgets) applyDefaults() {
	for _, x := range []*Budget{&b.PerPrincipal, &b.PerTenant} {
		for _, a := range []*Allowance{&x.Calls, &x.ResultBytes} {
			if a.Window == 0 {
				a.Window = legate.Duration(time.Hour)
			}
		}
		if x.Writes.Window == 0 {
			x.Writes.Window = legate.Duration(24 * time.Hour)
		}
	}
}

// validate checks what the tags cannot: the windows' bounds.
func (b *Budgets) validate(path string) []error {
	var errs []error
	for i, x := range []*Budget{&b.PerPrincipal, &b.PerTenant} {
		for j, a := range []Allowance{x.Calls, x.ResultBytes, x.Writes} {
			if w := time.Duration(a.Window); w != 0 && (w < time.Second || w > MaxBudgetWindow) {
				errs = append(errs, &strictyaml.PathError{Path: fmt.Sprintf("%s.%s.%s.window", path, []string{"per_principal", "per_tenant"}[i], []string{"calls", "result_bytes", "writes"}[j]),
					Msg: fmt.Sprintf("%s: want between 1s and %s", w, MaxBudgetWindow)})
			}
		}
	}
	return errs
}
