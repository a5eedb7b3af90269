package profiles

import (
	"context"
	"strings"

	"github.com/legate-mcp/legate/auth"
)

// Prompts and resources come from upstreams, not tools, so a profile
// narrows them by their source: a caller sees the prompts, resources and
// resource templates of an upstream (and completes against it) when its
// profile shows that upstream, and with a narrowed URL, when both
// profiles do. A profile shows an upstream that its connectors select
// (every one when it has none) and, when it has include globs, of which
// its view keeps at least one tool: include names what a profile keeps,
// and an upstream none of whose tools it keeps is not kept either.
// exclude and max_tools drop tools, never a whole upstream's prompts and
// resources (a connectors entry does that). The tenant rule, an upstream
// of another tenant never seen, holds before this.

// Shows reports, for the caller p (nil without authentication), which
// upstream ids its view shows the prompts and resources of; nil shows
// every one. Set Sources to use it.
func (d *Discovery) Shows(ctx context.Context, p *auth.Principal) func(id string) bool {
	if p = d.WithDefault(p); p == nil {
		return nil
	}
	names := []string{p.Profile}
	if p.Narrow != "" {
		names = append(names, p.Narrow)
	}
	var srcs []Source
	var inView map[string]bool // the sources of the tools of p's view, read once
	hidden := map[string]bool{}
	for _, name := range names {
		prof, known := d.Profile(name)
		if !known {
			return func(string) bool { return false }
		}
		if len(prof.Connectors) == 0 && len(prof.Include) == 0 {
			continue
		}
		if srcs == nil {
			srcs = d.Sources()
		}
		keep := Select(ctx, prof.Connectors, srcs, p.Tenant, p.Name)
		if len(prof.Include) > 0 && inView == nil {
			inView = map[string]bool{}
			for _, e := range d.View(p).Entries() {
				inView[strings.ToLower(e.SourceID())] = true
			}
		}
		for _, s := range srcs {
			id := strings.ToLower(s.ID)
			if keep != nil && !keep[id] || len(prof.Include) > 0 && !inView[id] {
				hidden[id] = true
			}
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	return func(id string) bool { return !hidden[strings.ToLower(id)] }
}
