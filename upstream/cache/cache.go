// Package cache is an upstream's tools as the store caches them and the
// catalog receives them: the rows of a listing (each definition's
// canonical JSON and its hash), the Tool decoded from a row, what a
// refresh changed (Diff), and pinning: a definition that differs from its
// pin is quarantined (Quarantined) rather than listed.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upconfig"
)

// Tool is one cached upstream tool, as the catalog receives it.
type Tool struct {
	// Upstream is the upstream's id.
	Upstream string
	// Name is the tool's name at the upstream, used when calling it.
	Name string
	// Def is the definition as the upstream listed it; its schemas are the
	// upstream's JSON, unchanged.
	Def *mcp.Tool
	// Hash identifies the definition (name, description, schemas, annotations).
	Hash string
	// Class follows the annotations (readOnlyHint → read, destructiveHint →
	// destructive, else write), never below write when the upstream is not trusted.
	Class legate.Class
	// Prefixed is false for an upstream with prefix: false.
	Prefixed bool
	// PerPrincipal is true for an upstream with auth: oauth: each
	// principal's calls carry its own token, and fail NOT_CONNECTED until
	// it connects the upstream.
	PerPrincipal bool
}

// Canonical is the tool's canonical name: mcp.<upstream>.<name>, or the
// bare name for an upstream with prefix: false.
func (t *Tool) Canonical() string {
	if !t.Prefixed {
		return t.Name
	}
	return "mcp." + t.Upstream + "." + t.Name
}

// ClassOf classes a tool from its annotations.
func ClassOf(a *mcp.ToolAnnotations, trusted bool) legate.Class {
	switch {
	case a != nil && a.DestructiveHint != nil && *a.DestructiveHint && !a.ReadOnlyHint:
		return legate.ClassDestructive
	case a != nil && a.ReadOnlyHint && trusted:
		return legate.ClassRead
	}
	return legate.ClassWrite
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spaces, so
// that equal definitions hash equally whatever their key order.
func canonicalJSON(raw []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Rows turns listed tools into cache rows: the definition's JSON and
// the hash of its canonical form.
func Rows(tools []*mcp.Tool) ([]store.CachedTool, error) {
	out := make([]store.CachedTool, 0, len(tools))
	for _, t := range tools {
		raw, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		canon, err := canonicalJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		sum := sha256.Sum256(canon)
		out = append(out, store.CachedTool{Name: t.Name, Definition: canon, Hash: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(out, func(a, b store.CachedTool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ToolFrom decodes a cache row, keeping the schemas as raw JSON so they
// reach clients exactly as the upstream wrote them.
func ToolFrom(c *upconfig.Config, row store.CachedTool) (*Tool, error) {
	// One decoding, with the schemas kept as raw JSON (decoding them into
	// maps would cost the most and serve nothing).
	var d struct {
		Meta         mcp.Meta             `json:"_meta"`
		Annotations  *mcp.ToolAnnotations `json:"annotations"`
		Description  string               `json:"description"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		Name         string               `json:"name"`
		OutputSchema json.RawMessage      `json:"outputSchema"`
		Title        string               `json:"title"`
		Icons        []mcp.Icon           `json:"icons"`
	}
	if err := json.Unmarshal(row.Definition, &d); err != nil {
		return nil, fmt.Errorf("cached tool %q of %q: %w", row.Name, c.ID, err)
	}
	def := &mcp.Tool{Meta: d.Meta, Annotations: d.Annotations, Description: d.Description, InputSchema: d.InputSchema,
		Name: d.Name, Title: d.Title, Icons: d.Icons}
	if len(d.InputSchema) == 0 || string(d.InputSchema) == "null" {
		// Missing (the SDK client decodes it as null): clients need an object schema.
		def.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if len(d.OutputSchema) > 0 && string(d.OutputSchema) != "null" {
		def.OutputSchema = d.OutputSchema
	}
	return &Tool{
		Upstream: c.ID, Name: row.Name, Def: def, Hash: row.Hash,
		Class: ClassOf(def.Annotations, c.Trusted()), Prefixed: c.Prefixed(), PerPrincipal: c.OAuthProtected(),
	}, nil
}

// Diff is what a refresh changed in one upstream's tools.
type Diff struct {
	Added, Removed, Changed []string
}

// Empty reports whether nothing changed.
func (d Diff) Empty() bool { return len(d.Added)+len(d.Removed)+len(d.Changed) == 0 }

func (d Diff) String() string {
	if d.Empty() {
		return "no change"
	}
	return fmt.Sprintf("%d added %v, %d removed %v, %d changed %v", len(d.Added), d.Added, len(d.Removed), d.Removed, len(d.Changed), d.Changed)
}

// DiffOf is what changed from the rows old to the rows cur.
func DiffOf(old, cur []store.CachedTool) Diff {
	var d Diff
	was := map[string]string{}
	for _, t := range old {
		was[t.Name] = t.Hash
	}
	for _, t := range cur {
		h, ok := was[t.Name]
		switch {
		case !ok:
			d.Added = append(d.Added, t.Name)
		case h != t.Hash:
			d.Changed = append(d.Changed, t.Name)
		}
		delete(was, t.Name)
	}
	for name := range was {
		d.Removed = append(d.Removed, name)
	}
	slices.Sort(d.Removed)
	return d
}

// SharedURIs gives, for each upstream of ids (in order) that offers a
// resource URI another offers too, those URIs and the others offering
// each: a read goes to the first by id.
func SharedURIs(ids []string, all map[string]store.UpstreamCache) map[string][]string {
	owners := map[string][]string{}
	for _, id := range ids {
		for _, uri := range all[id].Resources {
			owners[uri] = append(owners[uri], id)
		}
	}
	out := map[string][]string{}
	for _, id := range ids {
		for _, uri := range all[id].Resources {
			if len(owners[uri]) > 1 {
				out[id] = append(out[id], fmt.Sprintf("%s (also %v)", uri, slices.DeleteFunc(slices.Clone(owners[uri]), func(o string) bool { return o == id })))
			}
		}
	}
	return out
}
