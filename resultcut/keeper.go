package resultcut

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/store"
)

// The names the gateway serves the kept results by.
const (
	// ReadTool is the built-in tool that reads a kept result page by page.
	ReadTool = profiles.ResultTool
	// ResourcePrefix starts the URI of a kept result as a resource:
	// legate://results/{ref}, the whole kept text, or
	// legate://results/{ref}?page=N, one page.
	ResourcePrefix = "legate://results/"
	// MetaKey is the key of a tools/call's _meta whose number is the
	// call's token budget: it lowers the profile's, or sets one where the
	// profile has none.
	MetaKey = "io.legate/result-budget-tokens"
)

// Keeper applies the token budgets of calls (a profile's
// result_budget_tokens, a call's MetaKey) to their results, keeps the
// whole of each result it cuts in the store for its caller, and serves it
// back (ReadTool, ReadResource). Its profiles and views are the
// gateway's, through d: a reload's budgets apply at once.
type Keeper struct {
	results store.ResultStore
	d       *profiles.Discovery
	cfg     config.Results
	log     *slog.Logger
	now     func() time.Time
	pruned  atomic.Int64 // when expired results were last deleted, unix ms
}

// New is the keeper of results in st, of the callers d knows, kept as cfg
// says.
func New(st store.ResultStore, d *profiles.Discovery, cfg config.Results, log *slog.Logger) *Keeper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Keeper{results: st, d: d, cfg: cfg, log: log, now: time.Now}
}

// profileBudget is the budget of p's profile, and of the profile it
// narrows to (the lower of both that are set); 0: none.
func (k *Keeper) profileBudget(p *auth.Principal) int {
	if p = k.d.WithDefault(p); p == nil {
		return 0
	}
	prof, _ := k.d.Profile(p.Profile)
	b := prof.ResultBudgetTokens
	if p.Narrow != "" {
		if n, _ := k.d.Profile(p.Narrow); n.ResultBudgetTokens > 0 && (b == 0 || n.ResultBudgetTokens < b) {
			b = n.ResultBudgetTokens
		}
	}
	return b
}

// Budget is the token budget of a call p makes asking for perCall tokens
// in its _meta (0: none): perCall where it is lower than the profile's or
// the profile sets none, else the profile's; 0 when neither sets one.
func (k *Keeper) Budget(p *auth.Principal, perCall int) int {
	b := k.profileBudget(p)
	if perCall > 0 && (b == 0 || perCall < b) {
		b = perCall
	}
	return b
}

// Declines reports whether a call p makes, whose _meta holds MetaKey or
// not (asked), may have a budget: the HTTP and stdio fast paths hand such
// a call to the SDK's path, where Apply cuts its result. It costs a
// profile lookup.
func (k *Keeper) Declines(p *auth.Principal, asked bool) bool {
	return asked || k.profileBudget(p) > 0
}

// PerCall is the budget a call's _meta asks for, 0 for none or a value
// that is no positive whole number.
func PerCall(meta mcp.Meta) int {
	switch v := meta[MetaKey].(type) {
	case float64:
		if v >= 1 && v < 1<<31 && v == float64(int(v)) {
			return int(v)
		}
	case json.Number:
		if n, err := strconv.Atoi(string(v)); err == nil && n > 0 {
			return n
		}
	case int:
		return max(v, 0)
	}
	return 0
}

// Apply is res, the result of p's call of the tool it names name with
// _meta meta, cut to the call's budget (Budget), its whole kept for p
// (tenant and principal) for the retention; res itself when no budget
// applies or it fits. With no budget it costs what Budget does: the
// result is not read.
func (k *Keeper) Apply(ctx context.Context, p *auth.Principal, name string, meta mcp.Meta, res *mcp.CallToolResult) *mcp.CallToolResult {
	b := k.Budget(p, PerCall(meta))
	if b == 0 || res == nil || res.NeedsInput() || ResultTokens(res) <= max(b, MinBudget) {
		return res
	}
	view := k.d.View(p)
	e, known := view.Lookup(name)
	if known && e.Canonical == ReadTool {
		return res // its pages fit the budget they were cut to
	}
	tool, schema := name, false
	if known {
		tool, schema = e.Canonical, e.Tool.OutputSchema != nil
	}
	keep := Keep{Retention: time.Duration(k.cfg.Retention), MaxBytes: k.cfg.MaxBytes}
	if r, ok := view.Lookup(ReadTool); ok {
		keep.ReadTool = r.Wire // else the caller cannot call it: the notice names the resource only
	}
	if keep.Retention > 0 {
		keep.Ref = newRef()
	}
	// Third parties' content stays marked when read back: each page
	// carries the result's provenance and, spotlit, is wrapped again.
	mark, marked := provenance.Of(res)
	wrap := marked && k.cfg.Spotlight
	if wrap {
		keep.PageReserve = Tokens(provenance.Wrap("", mark)) + 2
	}
	out, cut := Cut(res, b, keep, schema)
	if !cut.Cut || keep.Ref == "" {
		return out
	}
	tenant, principal := k.owner(p)
	whole := kept{Document: cut.Document, Truncated: cut.Truncated, Tokens: cut.Tokens, Reserve: keep.PageReserve, Wrap: wrap}
	if marked {
		whole.Provenance = &mark
	}
	body, _ := json.Marshal(whole)
	now := k.now()
	err := k.results.Put(ctx, store.KeptResult{ID: keep.Ref, Tenant: tenant, Principal: principal, Tool: tool, Budget: cut.Budget,
		CreatedAt: now, ExpiresAt: now.Add(keep.Retention), Body: body})
	if err != nil {
		k.log.Warn("keeping a cut result", "tool", tool, "error", err)
		keep.Ref = ""
		out, _ = Cut(res, b, keep, schema)
		return out
	}
	k.prune(ctx, now)
	return out
}

// pruneEvery is how often a keeper deletes the expired results, as it
// keeps new ones: an expired result is never served, pruned or not.
const pruneEvery = 10 * time.Minute

// prune deletes the expired results if none were deleted for pruneEvery.
func (k *Keeper) prune(ctx context.Context, now time.Time) {
	last := k.pruned.Load()
	if now.UnixMilli()-last < pruneEvery.Milliseconds() || !k.pruned.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	if n, err := k.results.Prune(ctx, now); err != nil {
		k.log.Warn("pruning kept results", "error", err)
	} else if n > 0 {
		k.log.Info("pruned kept results", "count", n)
	}
}

// kept is a kept result's body in the store: with the result's provenance
// when it had one, and whether its pages are spotlit (Wrap), giving
// Reserve tokens of each to the marks.
type kept struct {
	Document   string           `json:"document"`
	Truncated  bool             `json:"truncated,omitempty"`
	Tokens     int              `json:"tokens"`
	Provenance *provenance.Mark `json:"provenance,omitempty"`
	Wrap       bool             `json:"wrap,omitempty"`
	Reserve    int              `json:"reserve,omitempty"`
}

// marked is text as the kept result's content is read back: spotlit when
// it was, and _meta holding its provenance (nil when it had none).
func (body kept) marked(text string) (string, map[string]any) {
	if body.Provenance == nil {
		return text, nil
	}
	if body.Wrap {
		text = provenance.Wrap(text, *body.Provenance)
	}
	return text, map[string]any{provenance.MetaKey: body.Provenance.JSON()}
}

// owner is who a call of p is made by (tenant, principal): the
// authenticated principal, or the gateway's local one.
func (k *Keeper) owner(p *auth.Principal) (tenant, principal string) {
	if p == nil || p.Name == "" {
		return "", k.d.Principal
	}
	return p.Tenant, p.Name
}

// newRef is a new reference of a kept result: 120 random bits.
func newRef() string {
	b := make([]byte, 15)
	rand.Read(b)
	return "r" + strings.ToLower(base32.StdEncoding.EncodeToString(b))
}

// errNotKept is the answer for a reference the caller cannot read.
func errNotKept(ref string) error {
	return legate.Errorf(legate.CodeNotFound, "no kept result %q: it expired, or was never kept for you", ref)
}

// get is the kept result ref of tenant and principal.
func (k *Keeper) get(ctx context.Context, ref, tenant, principal string) (store.KeptResult, kept, error) {
	r, err := k.results.Get(ctx, ref, tenant, principal, k.now())
	if errors.Is(err, store.ErrNotFound) {
		return r, kept{}, errNotKept(ref)
	}
	if err != nil {
		return r, kept{}, err
	}
	var body kept
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return r, kept{}, fmt.Errorf("kept result %s: %w", ref, err)
	}
	return r, body, nil
}

// page is page n (from 1) of kept result r, with its heading, and its
// _meta (kept.marked).
func page(r store.KeptResult, body kept, n int) (string, map[string]any, error) {
	starts := paginate(body.Document, pageTokens(r.Budget, body.Reserve))
	if n < 1 || n > len(starts) {
		return "", nil, legate.Errorf(legate.CodeInvalidArgument, "page: %d is not a page of result %s, which has pages 1 to %d", n, r.ID, len(starts))
	}
	from, to := starts[n-1], len(body.Document)
	if n < len(starts) {
		to = starts[n]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[legate: result %s of %s, page %d of %d (bytes %s to %s of %s)", r.ID, r.Tool, n, len(starts), num(from+1), num(to), num(len(body.Document)))
	switch {
	case n < len(starts):
		fmt.Fprintf(&b, "; next: page %d", n+1)
	case body.Truncated:
		b.WriteString("; the last page kept: the result went on, past what is kept")
	default:
		b.WriteString("; the last page")
	}
	b.WriteString("]\n")
	text, meta := body.marked(body.Document[from:to])
	b.WriteString(text)
	return b.String(), meta, nil
}

// ReadArgs are legate.result_read's arguments.
type ReadArgs struct {
	Ref  string `json:"ref" jsonschema:"the reference a cut result's notice gives"`
	Page int    `json:"page,omitempty" jsonschema:"which page, from 1 (default 1); each page fits the budget the result was cut to"`
}

// Builtin is the built-in read-only tool legate.result_read: a page of a
// result kept for its caller (tenant and principal); any other caller's
// reference, or an expired one, is NOT_FOUND.
func (k *Keeper) Builtin() connectors.Builtin {
	return connectors.Builtin{Instance: "legate", Tool: connectors.NewTool("result_read",
		"Read, page by page, the whole of a tool result that arrived cut to fit its token budget: give the ref its notice names, and a page.",
		legate.ClassRead,
		func(ctx context.Context, call *connectors.Call, in *ReadArgs) (*legate.Result, error) {
			r, body, err := k.get(ctx, in.Ref, call.Caller.Tenant, call.Caller.Principal)
			if err != nil {
				return nil, err
			}
			text, meta, err := page(r, body, max(in.Page, 1))
			if err != nil {
				return nil, err
			}
			return &legate.Result{Text: text, Meta: meta}, nil
		})}
}

// ReadResource answers resources/read of a legate://results/ URI for p:
// the whole kept text, or with ?page=N one page; ok is false for any other URI.
func (k *Keeper) ReadResource(ctx context.Context, p *auth.Principal, uri string) (res *mcp.ReadResourceResult, ok bool, err error) {
	rest, ok := strings.CutPrefix(uri, ResourcePrefix)
	if !ok {
		return nil, false, nil
	}
	ref, query, _ := strings.Cut(rest, "?")
	tenant, principal := k.owner(p)
	r, body, err := k.get(ctx, ref, tenant, principal)
	if err != nil {
		if legate.CodeOf(err) == legate.CodeNotFound {
			err = mcp.ResourceNotFoundError(uri)
		}
		return nil, true, err
	}
	text, meta := body.marked(body.Document)
	if n, found := strings.CutPrefix(query, "page="); found {
		i, perr := strconv.Atoi(n)
		if perr != nil {
			return nil, true, mcp.ResourceNotFoundError(uri)
		}
		if text, meta, err = page(r, body, i); err != nil {
			return nil, true, mcp.ResourceNotFoundError(uri)
		}
	}
	return &mcp.ReadResourceResult{Meta: meta, Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, true, nil
}
