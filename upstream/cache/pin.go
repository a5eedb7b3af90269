package cache

import (
	"context"
	"encoding/json"
	"log/slog"

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
