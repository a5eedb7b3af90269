package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upconfig"
)

// Pinning: each tool's definition hash is pinned when first seen (pin:
// tofu) or when an admin accepts it (pin: strict); a definition that differs
// from its pin is quarantined — neither listed nor callable — until accepted.

// Quarantined is an upstream tool whose definition differs from its pin
// (or, with pin: strict, was never accepted): it is neither listed nor callable.
type Quarantined struct {
	Tool       *Tool
	PinnedHash string // "" when never accepted
	Pinned     json.RawMessage
}

// Refused returns the tool of quarantine named name, by its canonical
// name or its wire name (wire), and the error that refuses a call to it;
// nil, nil if none is.
func Refused(quarantine []Quarantined, name string, wire func(canonical string) string) (*Tool, error) {
	for _, q := range quarantine {
		if c := q.Tool.Canonical(); name == c || name == wire(c) {
			return q.Tool, &legate.Error{Code: legate.CodePolicyDenied, Message: fmt.Sprintf(
				"%s is quarantined: its definition changed since it was accepted; an admin must review it (legate upstream diff %s) and accept it (legate upstream accept %s %s)",
				c, q.Tool.Upstream, q.Tool.Upstream, q.Tool.Name)}
		}
	}
	return nil, nil
}

// Event is q as its audit event tells it.
func (q Quarantined) Event() audit.Quarantine {
	return audit.Quarantine{Upstream: q.Tool.Upstream, Name: q.Tool.Name, Canonical: q.Tool.Canonical(),
		Class: string(q.Tool.Class), Hash: q.Tool.Hash, PinnedHash: q.PinnedHash}
}

// Pin sorts the cached rows of upstream c, given their pins, into the
// tools it lists and those it quarantines, pinning new definitions on
// first sight (pin: tofu) in ps; report is given each quarantined one.
func Pin(ctx context.Context, c *upconfig.Config, rows []store.CachedTool, pins map[string]store.Pin, ps store.PinStore, log *slog.Logger, report func(Quarantined)) ([]*Tool, []Quarantined, error) {
	id := c.ID
	tools := []*Tool{}
	quarantined := []Quarantined{}
	for _, row := range rows {
		if !c.Tools.Wanted(row.Name) {
			continue
		}
		t, err := ToolFrom(c, row)
		if err != nil {
			log.Error("skipping cached tool", "upstream", id, "error", err)
			continue
		}
		pin, pinned := pins[row.Name]
		switch {
		case pinned && pin.Hash == row.Hash:
		case !pinned && c.Pin != upconfig.PinStrict:
			if err := ps.Set(ctx, id, row.Name, store.Pin{Hash: row.Hash, Definition: row.Definition, AcceptedBy: "tofu"}, true); err != nil {
				return nil, nil, err
			}
		default:
			q := Quarantined{Tool: t, PinnedHash: pin.Hash}
			if pinned {
				full, err := ps.Get(ctx, id, row.Name)
				if err != nil {
					return nil, nil, err
				}
				q.Pinned = full.Definition
			}
			quarantined = append(quarantined, q)
			report(q)
			continue
		}
		tools = append(tools, t)
	}
	return tools, quarantined, nil
}

// Accept pins, in ps, the cached definitions rows of upstream id (all of
// them when tools is empty), by by, and returns the names accepted; a name
// of tools with no cached row is an error, after the others are pinned.
func Accept(ctx context.Context, ps store.PinStore, id, by string, rows []store.CachedTool, tools []string) ([]string, error) {
	var accepted []string
	for _, row := range rows {
		if len(tools) > 0 && !slices.Contains(tools, row.Name) {
			continue
		}
		if err := ps.Set(ctx, id, row.Name, store.Pin{Hash: row.Hash, Definition: row.Definition, AcceptedBy: by}, false); err != nil {
			return accepted, err
		}
		accepted = append(accepted, row.Name)
	}
	for _, name := range tools {
		if !slices.Contains(accepted, name) {
			return accepted, fmt.Errorf("upstream %s has no cached tool %q (legate upstream refresh %s first?)", id, name, id)
		}
	}
	return accepted, nil
}
