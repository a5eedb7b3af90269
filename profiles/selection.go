package profiles

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// A profile's connectors narrow its view to some connector instances and
// upstreams (sources), as seed 003 selects connectors:
//
//   - {name: notion} keeps notion, connected or not (a call to a source not
//     connected fails with the error that says how to connect it);
//   - {all: true} keeps every source the caller's tenant can use that is
//     connected: a native instance whose credentials all resolve (with
//     credentials_mode per_user, whose caller has a connection that has
//     not expired; per_user_or_shared, either), an upstream not down for
//     longer than DownThreshold;
//   - exclude drops ids from all; max keeps the first of all by id,
//     ignoring case, and a named source neither counts against it nor is
//     capped away.
//
// Tools of no source (the gateway's own, the connector types' built-in
// ones) stay. The selection is made when a view is built: with the
// catalog, a source's connection changing is seen at the next change of
// the catalog, as a session's tools are resolved when it starts.

// DownThreshold is how long an upstream may fail before all leaves it out.
const DownThreshold = time.Minute

// Source is one connector instance or upstream of the gateway.
type Source struct {
	ID          string
	Tenant      string
	Description string
	// Connected reports whether the source is usable by principal of tenant.
	Connected func(ctx context.Context, tenant, principal string) bool
	// ConnectFirst: the source's tools are in a principal's view only once
	// it is Connected for that principal (an upstream with auth: oauth,
	// without list_before_connect).
	ConnectFirst bool
}

// Connections tell whether a principal has connected an instance whose
// credentials are per user (connections.Manager).
type Connections interface {
	Connected(ctx context.Context, tenant, principal, instance string) bool
}

// Sources lists the connector instances defs (credentials read through
// res, per-user connections through conns, nil when no instance has them)
// and the upstreams of ups, sorted by id ignoring case. Descriptions come
// from cfg, else from the connector type or the upstream's origin.
func Sources(cfg *config.File, defs []sources.InstanceDef, res *vault.Resolver, ups *upstream.Manager, conns Connections) []Source {
	var out []Source
	described := map[string]string{}
	for _, c := range cfg.Connectors {
		described[cmp.Or(c.ID, c.Type)] = c.Description
	}
	for _, def := range defs {
		desc := described[def.ID]
		if t, ok := connectors.Lookup(def.Type); desc == "" && ok {
			desc = t.Description
		}
		out = append(out, Source{ID: def.ID, Tenant: def.Tenant, Description: desc, Connected: func(ctx context.Context, tenant, principal string) bool {
			perUser := def.PerUserCredential()
			shared := true
			for name, ref := range def.Credentials {
				if v, err := res.Resolve(ctx, tenant, ref); err != nil || v == "" {
					if name != perUser {
						return false
					}
					shared = false
				}
			}
			switch {
			case perUser == "":
				return true
			case def.Mode == config.CredentialsPerUserOrShared && shared && def.Credentials[perUser] != (vault.Ref{}):
				return true
			}
			return conns != nil && conns.Connected(ctx, tenant, principal, def.ID)
		}})
	}
	var once sync.Once
	var all []upstream.Status
	var statusErr error
	status := func(ctx context.Context) ([]upstream.Status, error) { // read once for every upstream
		once.Do(func() { all, statusErr = ups.Status(ctx) })
		return all, statusErr
	}
	for _, id := range ups.IDs() {
		u, ok := ups.Upstream(id)
		if !ok {
			continue
		}
		c := u.Config()
		out = append(out, Source{ID: id, Tenant: c.Tenant, Description: cmp.Or(c.Description, UpstreamDescription(c)), Connected: func(ctx context.Context, tenant, principal string) bool {
			all, err := status(ctx)
			i := slices.IndexFunc(all, func(s upstream.Status) bool { return s.ID == id })
			up := err == nil && i >= 0 && UpstreamUp(all[i], time.Now())
			return up && (!c.OAuthProtected() || conns != nil && conns.Connected(ctx, tenant, principal, id))
		}, ConnectFirst: c.OAuthProtected() && !c.ListBeforeConnect})
	}
	slices.SortFunc(out, func(a, b Source) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.ID), strings.ToLower(b.ID)), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// UpstreamDescription is what clients are told of an upstream that has no
// description of its own: its id and how it is reached, such as
// `the MCP server "everything" (stdio: npx -y @modelcontextprotocol/server-everything)`.
// It says nothing a client should not see: of a URL no user, query or
// fragment; of a command the program's name and its leading plain
// arguments, not options, which may carry keys.
func UpstreamDescription(c *upstream.Config) string {
	return fmt.Sprintf("the MCP server %q (%s: %s)", c.ID, c.TransportName(), upstreamTarget(c))
}

// upstreamTarget is an upstream's URL or command, shortened as
// UpstreamDescription says.
func upstreamTarget(c *upstream.Config) string {
	if len(c.Command) == 0 {
		u, err := url.Parse(c.URL)
		if err != nil || u.Host == "" {
			return "a remote server"
		}
		return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	}
	words := []string{path.Base(c.Command[0])}
	for _, a := range c.Command[1:] {
		if len(words) == 4 || strings.HasPrefix(a, "-") && a != "-y" || strings.ContainsAny(a, "=:@ ") && !strings.HasPrefix(a, "@") {
			return strings.Join(words, " ") + " …"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// UpstreamUp reports whether an upstream with status s is up at now, or has
// not been failing for longer than DownThreshold since it last answered.
func UpstreamUp(s upstream.Status, now time.Time) bool {
	switch {
	case s.LastError == "":
		return true
	case s.RefreshedAt.IsZero():
		return false // never listed: not connected
	}
	return now.Sub(s.RefreshedAt) <= DownThreshold
}

// Select is the set of source ids (lower-cased) that sels keep for
// principal of tenant among srcs (sorted as Sources sorts them), nil when
// sels is empty (every source).
func Select(ctx context.Context, sels []config.ConnectorSelection, srcs []Source, tenant, principal string) map[string]bool {
	if len(sels) == 0 {
		return nil
	}
	keep, named := map[string]bool{}, map[string]bool{}
	for _, s := range sels {
		if s.Name != "" {
			keep[strings.ToLower(s.Name)] = true
			named[strings.ToLower(s.Name)] = true
		}
	}
	for _, sel := range sels {
		if !sel.All {
			continue
		}
		excluded := map[string]bool{}
		for _, x := range sel.Exclude {
			excluded[strings.ToLower(x)] = true
		}
		n := 0
		for _, s := range srcs {
			id := strings.ToLower(s.ID)
			if excluded[id] || named[id] || s.Tenant != "" && s.Tenant != tenant {
				continue
			}
			if sel.Max > 0 && n == sel.Max {
				break
			}
			if s.Connected(ctx, tenant, principal) {
				keep[id] = true
				n++
			}
		}
	}
	return keep
}

// View is the view of base principal of tenant with profile prof sees:
// the tools of its tenant and the shared ones, of the sources its
// connectors select, narrowed by its include and exclude globs over
// canonical names and max_tools (the first by canonical name), under its
// wire naming; without apps (AppsOf), no app-only tool and no tool's
// _meta.ui. A search-mode view always holds the tools its list starts
// with, and a view with a result budget legate.result_read.
func View(ctx context.Context, base *catalog.Catalog, prof config.Profile, tenant, principal string, srcs []Source) (*catalog.Catalog, error) {
	keep := Select(ctx, prof.Connectors, srcs, tenant, principal)
	known, hidden := map[string]bool{}, map[string]bool{}
	for _, s := range srcs {
		known[strings.ToLower(s.ID)] = true
		if s.ConnectFirst && !s.Connected(ctx, tenant, principal) {
			hidden[strings.ToLower(s.ID)] = true
		}
	}
	search := prof.Discovery == config.DiscoverySearch
	var entries []*catalog.Entry
	kept := 0
	for _, e := range base.Entries() { // sorted by canonical name
		src := strings.ToLower(e.SourceID())
		apps := AppsOf(prof, e.SourceID())
		switch {
		case search && (e.Canonical == SearchTool || e.Canonical == ApprovalTool),
			e.Canonical == ResultTool && prof.ResultBudgetTokens > 0: // its cut results' notices name it
		case e.Tenant != "" && e.Tenant != tenant,
			keep != nil && known[src] && !keep[src], hidden[src],
			len(prof.Include) > 0 && !anyGlob(prof.Include, e.Canonical) || anyGlob(prof.Exclude, e.Canonical),
			prof.MaxTools > 0 && kept == prof.MaxTools:
			continue
		case e.AppOnly && !apps:
			continue // apps are off for this profile
		default:
			kept++
		}
		c := *e
		t := *e.Tool
		if !apps {
			t = *mcpapps.Strip(&t)
		}
		t.Name = e.Canonical
		c.Tool = &t
		entries = append(entries, &c)
	}
	naming := base.Naming()
	if prof.ToolNames != "" {
		naming = catalog.Naming(prof.ToolNames)
	}
	return catalog.Build(naming, entries)
}

// AppsOf reports whether a caller of prof may see the MCP Apps of source
// id: as the allow_mcp_ui of prof's entry for id says (AllowsMCPUI), else
// as prof's own allow_mcp_ui says, and always with no profile at all (the
// whole catalog, each upstream's allow_mcp_ui deciding).
func AppsOf(prof config.Profile, id string) bool {
	if allow, said := AllowsMCPUI(prof, id); said {
		return allow
	}
	return prof.AllowMCPUI || prof.Name == ""
}

func anyGlob(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Instructions are the gateway's MCP instructions: what Legate is, then one
// line per shared source of srcs (its id and description), never its
// tools: a client with a hundred connectors reads a few thousand
// characters.
func Instructions(srcs []Source) string {
	var b strings.Builder
	b.WriteString("Legate is a gateway: its tools come from the connectors and MCP servers its operator configured. " +
		"Sensitive calls may wait for a person's approval.")
	var lines []string
	for _, s := range srcs {
		if s.Tenant == "" {
			lines = append(lines, fmt.Sprintf("- %s: %s", s.ID, oneLine(s.Description)))
		}
	}
	if len(lines) > 0 {
		b.WriteString(" Connectors (find their tools with legate.search_tools, its connector argument narrowing to one):\n")
		b.WriteString(strings.Join(lines, "\n"))
	}
	return b.String()
}

// oneLine is s on one line, at most 200 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}
