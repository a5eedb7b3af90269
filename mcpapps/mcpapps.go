// Package mcpapps is what Legate knows of MCP Apps, the
// io.modelcontextprotocol/ui extension (SEP-1865): a tool's _meta.ui names
// a ui:// resource the host renders (text/html;profile=mcp-app) and who may
// call the tool (visibility: model, app or both). It negotiates the
// extension, reads a tool's visibility, and moves ui:// URIs into Legate's
// namespace (ui://mcp.<upstream>/…) and back, so that a resource is read
// from the upstream that offers it and no other.
package mcpapps

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
)

// The extension's names.
const (
	// Extension is the identifier negotiated in capabilities.extensions.
	Extension = "io.modelcontextprotocol/ui"
	// MIMEType is the type of an app's HTML.
	MIMEType = "text/html;profile=mcp-app"
	// Scheme starts every UI resource's URI.
	Scheme = "ui://"
	// metaKey holds a tool's or a resource's UI metadata in _meta.
	metaKey = "ui"
	// legacyURIKey is the flat _meta key that older servers (and the
	// ext-apps SDK, besides ui.resourceUri) set to the resource URI.
	legacyURIKey = "ui/resourceUri"
	// namespace starts the host of a URI in Legate's namespace.
	namespace = "mcp."
)

// Settings are the extension's settings Legate declares, to its clients and
// to the upstreams that may offer apps: HTML apps.
func Settings() map[string]any {
	return map[string]any{"mimeTypes": []string{MIMEType}}
}

// Accepts reports whether a client's capabilities negotiate the extension
// with HTML apps (mimeTypes holding MIMEType).
func Accepts(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	raw, ok := caps.Extensions[Extension]
	if !ok {
		return false
	}
	var s struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	b, err := json.Marshal(raw)
	if err != nil || json.Unmarshal(b, &s) != nil {
		return false
	}
	return slices.Contains(s.MIMETypes, MIMEType)
}

// AcceptsMeta is Accepts of the capabilities a stateless (2026-07-28)
// request carries in its _meta.
func AcceptsMeta(meta mcp.Meta) bool {
	raw, ok := meta[mcp.MetaKeyClientCapabilities]
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var caps mcp.ClientCapabilities
	if json.Unmarshal(b, &caps) != nil {
		return false
	}
	return Accepts(&caps)
}

// Negotiated reports whether the client of a request negotiated the
// extension: on its session's initialize or, stateless (2026-07-28), in
// the request's _meta.
func Negotiated(ss *mcp.ServerSession, meta mcp.Meta) bool {
	if ss != nil {
		if p := ss.InitializeParams(); p != nil && Accepts(p.Capabilities) {
			return true
		}
	}
	return AcceptsMeta(meta)
}

// Visibility is who may call a tool, from its _meta.ui.visibility: model
// (the agent, through tools/list), app (an app the host renders), both when
// the tool says nothing, and the values it lists otherwise (unknown ones
// ignored).
func Visibility(t *mcp.Tool) (model, app bool) {
	ui, _ := t.Meta[metaKey].(map[string]any)
	var list []string
	switch v := ui["visibility"].(type) {
	case []string:
		list = v
	case []any:
		for _, s := range v {
			if s, ok := s.(string); ok {
				list = append(list, s)
			}
		}
	default:
		return true, true
	}
	for _, v := range list {
		switch v {
		case "model":
			model = true
		case "app":
			app = true
		}
	}
	return model, app
}

// HasUI reports whether a tool carries the extension's metadata.
func HasUI(t *mcp.Tool) bool {
	_, ui := t.Meta[metaKey]
	_, legacy := t.Meta[legacyURIKey]
	return ui || legacy
}

// Strip is t without the extension's metadata: what a caller that may not
// see apps is shown. t itself is returned when it has none.
func Strip(t *mcp.Tool) *mcp.Tool {
	if !HasUI(t) {
		return t
	}
	c := *t
	c.Meta = maps.Clone(t.Meta)
	delete(c.Meta, metaKey)
	delete(c.Meta, legacyURIKey)
	if len(c.Meta) == 0 {
		c.Meta = nil
	}
	return &c
}

// Tool is upstream id's tool def as the catalog holds it. With apps not
// allowed, the tool loses its UI metadata, and a tool only an app may call
// is dropped (keep false). With apps allowed, its resource URI (both
// _meta.ui.resourceUri and the flat ui/resourceUri) is moved into Legate's
// namespace, a URI that is not ui:// dropped, and appOnly reports a tool
// the model may not call.
func Tool(id string, def *mcp.Tool, allow bool) (t *mcp.Tool, appOnly, keep bool) {
	if !HasUI(def) {
		return def, false, true
	}
	model, _ := Visibility(def)
	if !allow {
		if !model {
			return nil, false, false
		}
		return Strip(def), false, true
	}
	c := *def
	c.Meta = maps.Clone(def.Meta)
	if ui, ok := def.Meta[metaKey].(map[string]any); ok {
		ui = maps.Clone(ui)
		if uri, ok := ui["resourceUri"]; ok {
			if s, _ := uri.(string); IsUI(s) {
				ui["resourceUri"] = LocalURI(id, s)
			} else {
				delete(ui, "resourceUri")
			}
		}
		c.Meta[metaKey] = ui
	}
	if uri, ok := def.Meta[legacyURIKey]; ok {
		if s, _ := uri.(string); IsUI(s) {
			c.Meta[legacyURIKey] = LocalURI(id, s)
		} else {
			delete(c.Meta, legacyURIKey)
		}
	}
	return &c, !model, true
}

// IsUI reports whether uri is a UI resource's (the scheme ui, in any case).
func IsUI(uri string) bool {
	return len(uri) >= len(Scheme) && strings.EqualFold(uri[:len(Scheme)], Scheme)
}

// LocalURI is upstream id's UI resource uri in Legate's namespace:
// ui://weather/dashboard of upstream apps is ui://mcp.apps/weather/dashboard.
func LocalURI(id, uri string) string {
	return Scheme + namespace + id + "/" + uri[len(Scheme):]
}

// UpstreamURI is the upstream and its own URI of a URI in Legate's
// namespace; ok is false for any other URI.
func UpstreamURI(uri string) (id, orig string, ok bool) {
	if !IsUI(uri) {
		return "", "", false
	}
	rest, found := strings.CutPrefix(uri[len(Scheme):], namespace)
	if !found {
		return "", "", false
	}
	id, path, found := strings.Cut(rest, "/")
	if !found || id == "" || path == "" {
		return "", "", false
	}
	return id, Scheme + path, true
}

// Contents is upstream id's resources/read result with every UI
// resource's URI moved into Legate's namespace; the rest, the _meta.ui of
// each content (its CSP, permissions, domain) included, is kept.
func Contents(id string, res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res == nil {
		return nil
	}
	c := *res
	c.Contents = make([]*mcp.ResourceContents, len(res.Contents))
	for i, rc := range res.Contents {
		if rc != nil && IsUI(rc.URI) {
			r := *rc
			r.URI = LocalURI(id, rc.URI)
			rc = &r
		}
		c.Contents[i] = rc
	}
	return &c
}

// Resolve finds the tool of view an app names by its upstream's own name:
// an app's HTML calls its server's tools as that server names them, and the
// host sends the name as it is, where Legate names them mcp.<id>.<tool>.
// It is the one tool of that name, after mcp.<id>., whose _meta.ui lets an
// app call it; none, or several, is not found. A view without apps (its
// tools stripped of _meta.ui) resolves nothing.
func Resolve(view *catalog.Catalog, name string) (*catalog.Entry, bool) {
	var found *catalog.Entry
	for _, e := range view.Entries() {
		rest, ok := strings.CutPrefix(e.Canonical, namespace)
		if _, tool, _ := strings.Cut(rest, "."); !ok || tool != name || !HasUI(e.Tool) {
			continue
		}
		if _, app := Visibility(e.Tool); !app {
			continue
		}
		if found != nil {
			return nil, false
		}
		found = e
	}
	return found, found != nil
}
