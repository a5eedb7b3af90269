package mcpapps_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/mcpapps"
)

// tool decodes a tool as an upstream sends it, so that its _meta holds
// what JSON decoding gives ([]any, map[string]any).
func tool(t *testing.T, js string) *mcp.Tool {
	t.Helper()
	var tl mcp.Tool
	if err := json.Unmarshal([]byte(js), &tl); err != nil {
		t.Fatal(err)
	}
	return &tl
}

func TestVisibility(t *testing.T) {
	for _, c := range []struct {
		js         string
		model, app bool
	}{
		{`{"name":"plain"}`, true, true},
		{`{"name":"both","_meta":{"ui":{"resourceUri":"ui://x/y"}}}`, true, true},
		{`{"name":"app","_meta":{"ui":{"visibility":["app"]}}}`, false, true},
		{`{"name":"model","_meta":{"ui":{"visibility":["model"]}}}`, true, false},
		{`{"name":"listed","_meta":{"ui":{"visibility":["app","model"]}}}`, true, true},
		{`{"name":"unknown","_meta":{"ui":{"visibility":["other"]}}}`, false, false},
	} {
		tl := tool(t, c.js)
		if model, app := mcpapps.Visibility(tl); model != c.model || app != c.app {
			t.Errorf("%s: model %t app %t, want %t %t", tl.Name, model, app, c.model, c.app)
		}
	}
	// A definition built in Go, with a []string.
	if model, app := mcpapps.Visibility(&mcp.Tool{Meta: mcp.Meta{"ui": map[string]any{"visibility": []string{"app"}}}}); model || !app {
		t.Errorf("[]string visibility: model %t app %t, want false true", model, app)
	}
}

func TestToolAllowed(t *testing.T) {
	def := tool(t, `{"name":"show","_meta":{"ui":{"resourceUri":"ui://weather/dash","visibility":["model","app"]},"ui/resourceUri":"ui://weather/dash","other":1}}`)
	got, appOnly, keep := mcpapps.Tool("wx", def, true)
	if !keep || appOnly {
		t.Fatalf("keep %t appOnly %t, want true false", keep, appOnly)
	}
	ui := got.Meta["ui"].(map[string]any)
	if ui["resourceUri"] != "ui://mcp.wx/weather/dash" || got.Meta["ui/resourceUri"] != "ui://mcp.wx/weather/dash" {
		t.Errorf("meta %v: want both URIs as ui://mcp.wx/weather/dash", got.Meta)
	}
	if !reflect.DeepEqual(ui["visibility"], []any{"model", "app"}) || got.Meta["other"] != float64(1) {
		t.Errorf("meta %v: visibility and other keys must be kept", got.Meta)
	}
	// The cached definition is not changed: the catalog is rebuilt from it.
	if def.Meta["ui"].(map[string]any)["resourceUri"] != "ui://weather/dash" || def.Meta["ui/resourceUri"] != "ui://weather/dash" {
		t.Errorf("the upstream's definition was changed: %v", def.Meta)
	}

	appTool := tool(t, `{"name":"refresh","_meta":{"ui":{"resourceUri":"ui://weather/dash","visibility":["app"]}}}`)
	if _, appOnly, keep := mcpapps.Tool("wx", appTool, true); !keep || !appOnly {
		t.Errorf("app-only tool: keep %t appOnly %t, want true true", keep, appOnly)
	}

	bad := tool(t, `{"name":"bad","_meta":{"ui":{"resourceUri":"https://evil.example/x"},"ui/resourceUri":"javascript:x"}}`)
	got, _, _ = mcpapps.Tool("wx", bad, true)
	if _, ok := got.Meta["ui"].(map[string]any)["resourceUri"]; ok {
		t.Errorf("a resource URI that is not ui:// was kept: %v", got.Meta)
	}
	if _, ok := got.Meta["ui/resourceUri"]; ok {
		t.Errorf("a flat resource URI that is not ui:// was kept: %v", got.Meta)
	}

	plain := tool(t, `{"name":"plain"}`)
	if got, appOnly, keep := mcpapps.Tool("wx", plain, true); got != plain || appOnly || !keep {
		t.Errorf("a tool without UI is kept as it is")
	}
}

func TestToolNotAllowed(t *testing.T) {
	def := tool(t, `{"name":"show","_meta":{"ui":{"resourceUri":"ui://weather/dash"},"ui/resourceUri":"ui://weather/dash","other":1}}`)
	got, appOnly, keep := mcpapps.Tool("wx", def, false)
	if !keep || appOnly {
		t.Fatalf("keep %t appOnly %t, want true false", keep, appOnly)
	}
	if _, ok := got.Meta["ui"]; ok {
		t.Errorf("_meta.ui kept with apps off: %v", got.Meta)
	}
	if _, ok := got.Meta["ui/resourceUri"]; ok {
		t.Errorf("ui/resourceUri kept with apps off: %v", got.Meta)
	}
	if got.Meta["other"] != float64(1) {
		t.Errorf("other _meta dropped: %v", got.Meta)
	}
	appTool := tool(t, `{"name":"refresh","_meta":{"ui":{"visibility":["app"]}}}`)
	if got, _, keep := mcpapps.Tool("wx", appTool, false); keep || got != nil {
		t.Errorf("an app-only tool of an upstream with apps off is kept")
	}
	only := tool(t, `{"name":"show","_meta":{"ui":{"resourceUri":"ui://a/b"}}}`)
	if got := mcpapps.Strip(only); got.Meta != nil {
		t.Errorf("Strip left an empty _meta: %v", got.Meta)
	}
}

func TestURIs(t *testing.T) {
	if got := mcpapps.LocalURI("wx", "ui://weather/dash?x=1"); got != "ui://mcp.wx/weather/dash?x=1" {
		t.Errorf("LocalURI = %q", got)
	}
	for _, c := range []struct {
		uri, id, orig string
		ok            bool
	}{
		{"ui://mcp.wx/weather/dash", "wx", "ui://weather/dash", true},
		{"UI://mcp.wx/weather/dash", "wx", "ui://weather/dash", true},
		{"ui://weather/dash", "", "", false},
		{"ui://mcp.wx", "", "", false},
		{"ui://mcp./x", "", "", false},
		{"file:///mcp.wx/x", "", "", false},
	} {
		id, orig, ok := mcpapps.UpstreamURI(c.uri)
		if id != c.id || orig != c.orig || ok != c.ok {
			t.Errorf("UpstreamURI(%q) = %q %q %t, want %q %q %t", c.uri, id, orig, ok, c.id, c.orig, c.ok)
		}
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: "ui://weather/dash", MIMEType: mcpapps.MIMEType, Text: "<html></html>", Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://api.example"}}}}},
		{URI: "file:///x", Text: "x"},
	}}
	got := mcpapps.Contents("wx", res)
	if got.Contents[0].URI != "ui://mcp.wx/weather/dash" || got.Contents[1].URI != "file:///x" {
		t.Errorf("Contents URIs %q %q", got.Contents[0].URI, got.Contents[1].URI)
	}
	if got.Contents[0].MIMEType != mcpapps.MIMEType || !reflect.DeepEqual(got.Contents[0].Meta, res.Contents[0].Meta) {
		t.Errorf("Contents lost the mime type or _meta.ui: %+v", got.Contents[0])
	}
	if res.Contents[0].URI != "ui://weather/dash" {
		t.Errorf("Contents changed the upstream's result")
	}
}

func TestAccepts(t *testing.T) {
	caps := &mcp.ClientCapabilities{}
	if mcpapps.Accepts(caps) || mcpapps.Accepts(nil) {
		t.Error("a client without the extension accepts apps")
	}
	caps.AddExtension(mcpapps.Extension, map[string]any{"mimeTypes": []string{"text/html"}})
	if mcpapps.Accepts(caps) {
		t.Error("a client without the app mime type accepts apps")
	}
	caps.AddExtension(mcpapps.Extension, mcpapps.Settings())
	if !mcpapps.Accepts(caps) {
		t.Error("a client with the extension does not accept apps")
	}
	var meta mcp.Meta
	if err := json.Unmarshal([]byte(`{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}`), &meta); err != nil {
		t.Fatal(err)
	}
	if !mcpapps.AcceptsMeta(meta) || !mcpapps.Negotiated(nil, meta) {
		t.Error("a stateless request's capabilities with the extension do not accept apps")
	}
	if mcpapps.AcceptsMeta(mcp.Meta{}) {
		t.Error("a stateless request without capabilities accepts apps")
	}
}

// TestResolve: an app's call by its server's own name finds the one tool of
// that name an app may call; a tool without UI, one only the model may
// call, and a name two upstreams' apps share are not found.
func TestResolve(t *testing.T) {
	ui := func(vis ...any) mcp.Meta {
		return mcp.Meta{"ui": map[string]any{"resourceUri": "ui://mcp.x/d", "visibility": vis}}
	}
	view, err := catalog.Build(catalog.Safe, []*catalog.Entry{
		{Canonical: "mcp.wx.refresh", Tool: &mcp.Tool{Meta: ui("app")}, AppOnly: true},
		{Canonical: "mcp.wx.show", Tool: &mcp.Tool{Meta: ui("model")}},
		{Canonical: "mcp.wx.plain", Tool: &mcp.Tool{}},
		{Canonical: "mcp.a.dup", Tool: &mcp.Tool{Meta: ui("app", "model")}},
		{Canonical: "mcp.b.dup", Tool: &mcp.Tool{Meta: ui("app")}},
		{Canonical: "web.refresh", Tool: &mcp.Tool{Meta: ui("app")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := mcpapps.Resolve(view, "refresh"); !ok || e.Canonical != "mcp.wx.refresh" {
		t.Errorf("Resolve(refresh) = %v %t, want mcp.wx.refresh", e, ok)
	}
	for _, name := range []string{"show", "plain", "dup", "nothing", "wx.refresh"} {
		if e, ok := mcpapps.Resolve(view, name); ok {
			t.Errorf("Resolve(%q) = %s, want not found", name, e.Canonical)
		}
	}
}
