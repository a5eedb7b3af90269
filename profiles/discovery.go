// Package profiles is what a profile shows its callers: its view of the
// catalog (tenant, connector selection, globs, max_tools, wire naming), its
// discovery mode (the whole list, or legate.search_tools and what each
// session found), and the instructions line of each connector.
package profiles

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/embeddings"
	"github.com/legate-mcp/legate/search"
)

// Progressive discovery. A profile with `discovery: search` does not show
// its whole view in tools/list: a session's list holds legate.search_tools
// and legate.approval_status, then every tool a search of that session
// returned, added as the search returns it, with
// notifications/tools/list_changed. The view itself is unchanged: a call
// to any tool of it works, listed or not, so a stateless client (whose
// list never grows) calls the tools it found by name.

// The gateway's own tools that a search-mode list always holds.
const (
	SearchTool   = "legate.search_tools"
	ApprovalTool = "legate.approval_status"
)

// ResultTool is the gateway's own tool that reads the kept whole of a
// result cut to a token budget (package resultcut).
const ResultTool = "legate.result_read"

// Search limits of legate.search_tools.
const (
	defaultSearchLimit = 5
	maxSearchLimit     = 20
)

// Discovery answers tools/list by each caller's discovery mode and runs
// legate.search_tools. Set its functions before use.
type Discovery struct {
	// View is the view of the catalog p sees (nil: no authentication).
	View func(p *auth.Principal) *catalog.Catalog
	// Profile finds a profile by name.
	Profile func(name string) (config.Profile, bool)
	// Default is the top-level profile: the profile of callers who name none.
	Default func() string
	// Principal is who calls without authentication.
	Principal string
	// Sources lists the gateway's connector instances and upstreams.
	Sources func() []Source
	// Log receives what cannot reach a caller.
	Log *slog.Logger
	// Dense, when set, fuses BM25 with the ranking of embeddings.
	Dense *Dense

	mu    sync.Mutex
	found map[*mcp.ServerSession]map[string]bool // what each session's searches found
}

// WithDefault is p, or the local principal without authentication, with
// the top-level profile when it names none.
func (d *Discovery) WithDefault(p *auth.Principal) *auth.Principal {
	def := d.Default()
	switch {
	case def == "" || p != nil && p.Profile != "":
		return p
	case p == nil:
		return &auth.Principal{Name: d.Principal, Profile: def}
	}
	c := *p
	c.Profile = def
	return &c
}

// AppsAllowed reports which sources' MCP Apps p may see, by id: only
// those its profile, and the profile it narrows to, show (AppsOf: the
// entry's allow_mcp_ui, else the profile's; with no profile, all, each
// upstream's allow_mcp_ui deciding).
func (d *Discovery) AppsAllowed(p *auth.Principal) func(id string) bool {
	if p = d.WithDefault(p); p == nil {
		return func(string) bool { return true }
	}
	var profs []config.Profile
	for _, name := range []string{p.Profile, p.Narrow} {
		prof, known := d.Profile(name)
		if !known {
			return func(string) bool { return false }
		}
		profs = append(profs, prof)
	}
	return func(id string) bool {
		for _, prof := range profs {
			if !AppsOf(prof, id) {
				return false
			}
		}
		return true
	}
}

// SearchMode reports whether p's profile lists tools by search.
func (d *Discovery) SearchMode(p *auth.Principal) bool {
	if p = d.WithDefault(p); p == nil {
		return false
	}
	prof, _ := d.Profile(cmp.Or(p.Narrow, p.Profile)) // a narrowed view is listed as its URL's profile lists
	return prof.Discovery == config.DiscoverySearch
}

// List is the tools/list result of p on session ss (nil: stateless).
func (d *Discovery) List(p *auth.Principal, ss *mcp.ServerSession) *mcp.ListToolsResult {
	view := d.View(p)
	if !d.SearchMode(p) {
		return view.ListResult()
	}
	go view.Index() // built ahead of the session's first search, off its path
	d.mu.Lock()
	found := d.found[ss]
	var tools []*mcp.Tool
	for _, e := range view.Entries() {
		if e.Canonical == SearchTool || e.Canonical == ApprovalTool || ss != nil && found[e.Canonical] {
			tools = append(tools, e.Tool)
		}
	}
	d.mu.Unlock()
	return &mcp.ListToolsResult{Tools: tools, Cacheable: catalog.CallerCache}
}

// ListJSON is List encoded, as the HTTP fast path writes it.
func (d *Discovery) ListJSON(p *auth.Principal, ss *mcp.ServerSession) []byte {
	if !d.SearchMode(p) {
		return d.View(p).ListJSON()
	}
	b, _ := json.Marshal(d.List(p, ss))
	return b
}

// add records names as found by session ss and reports whether any is
// new. A session's record goes when the session ends.
func (d *Discovery) add(ss *mcp.ServerSession, names []string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.found == nil {
		d.found = map[*mcp.ServerSession]map[string]bool{}
	}
	set := d.found[ss]
	if set == nil {
		set = map[string]bool{}
		d.found[ss] = set
		go func() {
			ss.Wait()
			d.mu.Lock()
			delete(d.found, ss)
			d.mu.Unlock()
		}()
	}
	added := false
	for _, n := range names {
		if !set[n] {
			set[n], added = true, true
		}
	}
	return added
}

// SearchArgs are legate.search_tools' arguments.
type SearchArgs struct {
	Query     string `json:"query" jsonschema:"what the tool should do, in your own words (e.g. open a ticket about the login bug)"`
	Connector string `json:"connector,omitempty" jsonschema:"only tools of this connector instance or upstream id"`
	Class     string `json:"class,omitempty" jsonschema:"only tools of this operation class: read, draft, write or destructive"`
	Limit     int    `json:"limit,omitempty" jsonschema:"how many tools at most (default 5, at most 20)"`
}

// Found is one tool legate.search_tools returns: its whole declaration.
type Found struct {
	// Name is the name to call it by (its wire name in the caller's view).
	Name         string               `json:"name"`
	Canonical    string               `json:"canonical"`
	Connector    string               `json:"connector"`
	Class        legate.Class         `json:"class"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description"`
	InputSchema  any                  `json:"input_schema"`
	OutputSchema any                  `json:"output_schema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Tool is the built-in read-only tool legate.search_tools (named
// search_tools within the legate namespace). It searches the view of the
// caller WithCaller names and, on a session of a search-mode profile,
// adds what it found to the session's tools/list and notifies the client.
func (d *Discovery) Tool() connectors.Tool {
	return connectors.NewTool("search_tools",
		"Find the tools that can do a task, described in your own words; returns each tool's name, description and input schema. "+
			"Search before concluding that no tool can help.",
		legate.ClassRead,
		func(ctx context.Context, call *connectors.Call, in *SearchArgs) (*legate.Result, error) {
			c, _ := ctx.Value(callerKey{}).(*caller)
			if c == nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "search_tools runs only through the gateway")
			}
			found, ranking, why, err := searchView(ctx, d.View(c.principal), in, d.Dense)
			if err != nil {
				return nil, err
			}
			if c.session != nil && d.SearchMode(c.principal) {
				names := make([]string, len(found))
				for i, f := range found {
					names[i] = f.Canonical
				}
				if d.add(c.session, names) {
					d.notifyListChanged(ctx, c.session)
				}
			}
			out := map[string]any{"tools": found}
			if d.Dense != nil { // how it ranked, for an operator who turned embeddings on
				out["ranking"] = ranking
				if why != "" {
					out["embeddings_error"] = why
				}
			}
			return &legate.Result{Structured: out}, nil
		})
}

// Search runs legate.search_tools over view by BM25 alone (the CLI's
// search: it does not embed the catalog for one request).
func Search(view *catalog.Catalog, in *SearchArgs) ([]Found, error) {
	found, _, _, err := searchView(context.Background(), view, in, nil)
	return found, err
}

// Rankings of legate.search_tools.
const (
	RankingBM25  = "bm25"
	RankingFused = "bm25+embeddings"
)

// searchView runs legate.search_tools over view: by BM25 alone, or fused by
// reciprocal rank with dense's ranking when it is set and can rank (why
// says otherwise why not). A request that is a tool's name or alias
// ranks by BM25 alone, which puts that tool first.
func searchView(ctx context.Context, view *catalog.Catalog, in *SearchArgs, dense *Dense) (found []Found, ranking, why string, err error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, "", "", legate.Errorf(legate.CodeInvalidArgument, "query: give a few words on what the tool should do")
	}
	class := legate.Class(strings.ToLower(strings.TrimSpace(in.Class)))
	if class != "" && !slices.Contains([]legate.Class{legate.ClassRead, legate.ClassDraft, legate.ClassWrite, legate.ClassDestructive}, class) {
		return nil, "", "", legate.Errorf(legate.CodeInvalidArgument, "class: %q is none of read, draft, write, destructive", in.Class)
	}
	limit := in.Limit
	switch {
	case limit <= 0:
		limit = defaultSearchLimit
	case limit > maxSearchLimit:
		limit = maxSearchLimit
	}
	entries := view.Entries()
	keep := func(i int) bool {
		e := entries[i]
		return e.Canonical != SearchTool && !e.AppOnly &&
			(in.Connector == "" || strings.EqualFold(e.SourceID(), in.Connector)) &&
			(class == "" || e.Class == class)
	}
	ranking = RankingBM25
	var docs []int
	if dense == nil || exactName(view, in.Query) {
		docs = docsOf(view.Index().Search(in.Query, search.Options{Limit: limit, Keep: keep}))
	} else {
		docs = docsOf(view.Index().Search(in.Query, search.Options{Limit: max(limit, denseCandidates), Keep: keep}))
		var near []int
		if near, why = dense.rank(ctx, view, in.Query, keep); why == "" {
			fused := embeddings.Fuse(docs, near)
			ranking, docs = RankingFused, make([]int, len(fused))
			for i, s := range fused {
				docs[i] = s.N
			}
		}
		docs = docs[:min(limit, len(docs))]
	}
	found = make([]Found, 0, len(docs))
	for _, n := range docs {
		e := entries[n]
		found = append(found, Found{
			Name: e.Wire, Canonical: e.Canonical, Connector: e.SourceID(), Class: e.Class,
			Title: e.Tool.Title, Description: e.Tool.Description, InputSchema: e.Tool.InputSchema,
			OutputSchema: e.Tool.OutputSchema, Annotations: e.Tool.Annotations,
		})
	}
	return found, ranking, why, nil
}

// exactName reports whether q is the name or alias of a tool of view.
func exactName(view *catalog.Catalog, q string) bool {
	_, ok := view.Lookup(strings.TrimSpace(q))
	return ok
}

func docsOf(hits []search.Hit) []int {
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.Doc
	}
	return out
}

// listChangedToken marks the progress notification that
// ListChangedMiddleware turns into notifications/tools/list_changed: the
// SDK sends that notification only to every session at once.
var listChangedToken = &struct{ byte }{}

// notifyListChanged tells session ss that its tools/list changed.
func (d *Discovery) notifyListChanged(ctx context.Context, ss *mcp.ServerSession) {
	if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: listChangedToken}); err != nil && d.Log != nil {
		d.Log.Debug("notifying a session of its tools/list", "error", err)
	}
}

// ListChangedMiddleware is the sending middleware that sends the
// notification of one session's list change.
func ListChangedMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.ProgressNotificationParams); ok && method == "notifications/progress" && p.ProgressToken == listChangedToken {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			return next(ctx, "notifications/tools/list_changed", &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}})
		}
		return next(ctx, method, req)
	}
}

// caller is who calls the gateway's own tools, beyond connectors.Call:
// whose view they run in, and on which session.
type caller struct {
	principal *auth.Principal
	session   *mcp.ServerSession
}

type callerKey struct{}

// CallerOf is the caller WithCaller gave ctx: its principal (nil without
// authentication) and session; ok is false outside a built-in tool's call.
func CallerOf(ctx context.Context) (p *auth.Principal, ss *mcp.ServerSession, ok bool) {
	c, ok := ctx.Value(callerKey{}).(*caller)
	if !ok {
		return nil, nil, false
	}
	return c.principal, c.session, true
}

// WithCaller gives a call to a built-in tool its caller: the principal (nil
// without authentication) and the session (nil: none).
func WithCaller(ctx context.Context, p *auth.Principal, ss *mcp.ServerSession) context.Context {
	return context.WithValue(ctx, callerKey{}, &caller{principal: p, session: ss})
}
