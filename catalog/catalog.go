// Package catalog is the unified tool catalog: every tool Legate offers, from
// native connectors and upstream MCP servers, under its canonical name
// (`<instance>.<tool>`, `mcp.<upstream>.<tool>`) and its wire name (what a
// client sees in tools/list).
//
// A Catalog is immutable once built; the gateway swaps in a new one when a
// source changes, so readers never lock.
package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/search"
)

// Naming chooses how canonical names are shown to clients.
type Naming string

// The naming modes.
const (
	// Safe maps names to ^[A-Za-z0-9_-]{1,64}$, which every host accepts:
	// "." becomes "__", other characters "_", and a name still too long (or
	// changed beyond dots, or colliding) ends in "_" and a short hash.
	Safe Naming = "safe"
	// Canonical shows canonical names as they are.
	Canonical Naming = "canonical"
)

// MaxWireLen is the longest wire name under Safe.
const MaxWireLen = 64

// Entry is one tool in the catalog.
type Entry struct {
	// Canonical is the tool's canonical name.
	Canonical string
	// Wire is the name clients see; set by Build.
	Wire string
	// Source describes where the tool comes from, for people: e.g.
	// `connector "web" (config.yaml connectors[0])`.
	Source string
	// Class is the tool's declared operation class.
	Class legate.Class
	// Tenant owns the tool's source; "" for a shared one.
	Tenant string
	// Hash identifies the definition the source gave: an approval is bound
	// to it, so a changed tool cannot run on an earlier approval.
	Hash string
	// Tool is the definition as sent to clients; Build sets its Name to Wire.
	Tool *mcp.Tool
	// Target is the source's own handle for executing the tool; the
	// catalog never looks inside it.
	Target any
	// AppOnly marks a tool only an MCP App may call (its _meta.ui.visibility
	// lacks "model"): never listed, nor found by search, but found by
	// Lookup, for the call path to take it when an app calls it.
	AppOnly bool
	// Aliases are other canonical names Lookup finds the entry by (and
	// their wire names), never listed. An alias that is another entry's
	// name, or that two entries claim, finds neither.
	Aliases []string
}

// Catalog is an immutable set of entries.
type Catalog struct {
	naming      Naming
	entries     []*Entry // sorted by canonical name
	byWire      map[string]*Entry
	byCanonical map[string]*Entry
	byAlias     map[string]*Entry
	tools       []*mcp.Tool
	fingerprint string

	listOnce sync.Once
	listJSON []byte

	indexOnce sync.Once
	index     *search.Index
}

// Build makes a catalog of entries. Two entries with one canonical name are
// an error naming both sources.
func Build(naming Naming, entries []*Entry) (*Catalog, error) {
	if naming == "" {
		naming = Safe
	}
	c := &Catalog{
		naming:      naming,
		entries:     slices.Clone(entries),
		byWire:      make(map[string]*Entry, len(entries)),
		byCanonical: make(map[string]*Entry, len(entries)),
	}
	slices.SortFunc(c.entries, func(a, b *Entry) int { return strings.Compare(a.Canonical, b.Canonical) })
	var errs []string
	for _, e := range c.entries {
		if prev, dup := c.byCanonical[e.Canonical]; dup {
			errs = append(errs, fmt.Sprintf("tool %q is defined by both %s and %s", e.Canonical, prev.Source, e.Source))
			continue
		}
		c.byCanonical[e.Canonical] = e
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("tool name collision: %s", strings.Join(errs, "; "))
	}
	// Wire names: a first pass finds names two canonical names share; those
	// get a hash suffix, which depends only on the canonical name, so the
	// result does not depend on the order of the entries.
	first := make(map[string]int, len(c.entries))
	for _, e := range c.entries {
		first[wireName(e.Canonical, naming, false)]++
	}
	for _, e := range c.entries {
		w := wireName(e.Canonical, naming, false)
		if first[w] > 1 {
			w = wireName(e.Canonical, naming, true)
		}
		if prev, dup := c.byWire[w]; dup {
			return nil, fmt.Errorf("tool names %q (%s) and %q (%s) map to one wire name %q; rename one", prev.Canonical, prev.Source, e.Canonical, e.Source, w)
		}
		e.Wire = w
		c.byWire[w] = e
	}
	c.byAlias = aliases(c)
	c.tools = make([]*mcp.Tool, 0, len(c.entries))
	fp := sha256.New()
	for _, e := range c.entries {
		t := *e.Tool
		t.Name = e.Wire
		e.Tool = &t
		if !e.AppOnly {
			c.tools = append(c.tools, &t)
		}
		fmt.Fprintf(fp, "%s\x00%s\x00%s\x00%s\x00%t\n", e.Wire, e.Canonical, e.Class, e.Hash, e.AppOnly)
	}
	c.fingerprint = hex.EncodeToString(fp.Sum(nil))
	return c, nil
}

// CallerCache is the cache advice of every list the gateway serves:
// cacheable by the caller's own client only (what a caller sees depends on
// who it is) and stale at once (a list_changed may come at any time).
var CallerCache = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}

// ListResult is the catalog's tools/list result: every tool in one page,
// with CallerCache.
func (c *Catalog) ListResult() *mcp.ListToolsResult {
	return &mcp.ListToolsResult{Tools: c.tools, Cacheable: CallerCache}
}

// ListJSON is ListResult encoded once: listing thousands of tools then
// costs a write.
func (c *Catalog) ListJSON() []byte {
	c.listOnce.Do(func() {
		c.listJSON, _ = json.Marshal(c.ListResult())
	})
	return c.listJSON
}

// Fingerprint identifies what clients see of the catalog: two catalogs
// with the same fingerprint list the same tools (each entry's Hash stands
// for its definition).
func (c *Catalog) Fingerprint() string { return c.fingerprint }

// unsearched are the gateway's own tools that no search is for, indexed
// as empty documents so that their words weigh on no ranking: the reading
// back of a cut result (legate.result_read, listed wherever results may be
// cut), whose words (read, whole, page) would tilt every search.
var unsearched = map[string]bool{"legate.result_read": true}

// Index is the search index of the catalog's entries, built on first use
// and kept with the catalog (a view is a catalog too, so each view has
// its own): a hit's Doc is the position in Entries.
func (c *Catalog) Index() *search.Index {
	c.indexOnce.Do(func() {
		docs := make([]search.Doc, len(c.entries))
		for i, e := range c.entries {
			if !unsearched[e.Canonical] {
				docs[i] = search.FromTool(e.Canonical, e.SourceID(), e.Tool, e.Wire)
			}
		}
		c.index = search.New(docs)
	})
	return c.index
}

// SourceID is the id of the connector instance or upstream the entry's
// tool comes from: "github" for github.create_issue and
// mcp.github.create_issue, "legate" for the gateway's own tools.
func (e *Entry) SourceID() string {
	name, ok := strings.CutPrefix(e.Canonical, "mcp.")
	if !ok {
		name = e.Canonical
	}
	id, _, _ := strings.Cut(name, ".")
	return id
}

// Lookup finds an entry by wire name or, failing that, canonical name,
// then alias.
func (c *Catalog) Lookup(name string) (*Entry, bool) {
	if e, ok := c.byWire[name]; ok {
		return e, true
	}
	if e, ok := c.byCanonical[name]; ok {
		return e, true
	}
	e, ok := c.byAlias[name]
	return e, ok
}

// aliases maps the entries' aliases, and their wire names, to the
// entries; a name taken by an entry, or claimed twice, is left out.
func aliases(c *Catalog) map[string]*Entry {
	out := map[string]*Entry{}
	taken := map[string]bool{}
	for _, e := range c.entries {
		for _, a := range e.Aliases {
			for _, name := range []string{a, wireName(a, c.naming, false)} {
				if _, listed := c.byCanonical[name]; listed || c.byWire[name] != nil || taken[name] {
					continue
				}
				if prev, dup := out[name]; dup && prev != e {
					delete(out, name)
					taken[name] = true
					continue
				}
				out[name] = e
			}
		}
	}
	return out
}

// Entries returns every entry, sorted by canonical name. Do not modify them.
func (c *Catalog) Entries() []*Entry { return c.entries }

// Len is the number of tools.
func (c *Catalog) Len() int { return len(c.entries) }

// Naming is the catalog's naming mode.
func (c *Catalog) Naming() Naming { return c.naming }

// WireName is the wire name of a lone canonical name under naming.
func WireName(canonical string, naming Naming) string {
	return wireName(canonical, naming, false)
}

func wireName(canonical string, naming Naming, forceHash bool) string {
	if naming == Canonical {
		if forceHash {
			return canonical + "_" + shortHash(canonical)
		}
		return canonical
	}
	var b strings.Builder
	lossy := false
	for _, r := range canonical {
		switch {
		case r == '.':
			b.WriteString("__")
		case r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			lossy = true
		}
	}
	w := b.String()
	if !lossy && !forceHash && len(w) <= MaxWireLen && w != "" {
		return w
	}
	h := shortHash(canonical)
	if keep := MaxWireLen - len(h) - 1; len(w) > keep {
		w = w[:keep]
	}
	return w + "_" + h
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// Annotations tell clients what a tool's class means for their own UI.
func Annotations(c legate.Class) *mcp.ToolAnnotations {
	f, t := false, true
	switch c {
	case legate.ClassRead:
		return &mcp.ToolAnnotations{ReadOnlyHint: true}
	case legate.ClassDestructive:
		return &mcp.ToolAnnotations{DestructiveHint: &t}
	}
	return &mcp.ToolAnnotations{DestructiveHint: &f}
}
