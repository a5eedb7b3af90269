package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/store"
)

// appsUpstream is an MCP Apps server (go-sdk, sessions): show (model and
// app) and refresh (app only) with _meta.ui naming ui://w/d, that resource
// with its CSP, a plain resource, and caps, which says whether the client
// declared the extension.
func appsUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "apps-upstream", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	ui := func(vis ...string) mcp.Meta {
		return mcp.Meta{"ui": map[string]any{"resourceUri": "ui://w/d", "visibility": vis}}
	}
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "show", InputSchema: obj, Meta: ui("model", "app")}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("shown"), nil
	})
	s.AddTool(&mcp.Tool{Name: "refresh", InputSchema: obj, Meta: ui("app")}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("refreshed"), nil
	})
	s.AddTool(&mcp.Tool{Name: "caps", InputSchema: obj}, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, ok := r.Session.InitializeParams().Capabilities.Extensions[mcpapps.Extension]
		return text(map[bool]string{true: "negotiated", false: "not negotiated"}[ok]), nil
	})
	csp := mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{"https://api.example"}}, "permissions": map[string]any{"camera": map[string]any{}}}}
	s.AddResource(&mcp.Resource{URI: "ui://w/d", Name: "dash", MIMEType: mcpapps.MIMEType, Meta: csp}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ui://w/d", MIMEType: mcpapps.MIMEType, Text: "<!DOCTYPE html><p>d", Meta: csp}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "file:///note", Name: "note"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///note", Text: "note"}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// appsConnect connects to url at 2025-11-25, declaring MCP Apps with apps.
func appsConnect(t *testing.T, url string, apps bool) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	if apps {
		caps.AddExtension(mcpapps.Extension, mcpapps.Settings())
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolsByName(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPAppsRelayed: one upstream with allow_mcp_ui, the same server again
// without, profiles with and without apps. Legate negotiates the extension
// with the first alone; a client of the apps profile that negotiated apps
// sees _meta.ui with the URI in Legate's namespace, reads the ui://
// resource from it (mime type and _meta.ui kept), and calls the app-only
// tool by either name; one that did not negotiate is refused, and audited;
// the profile without apps sees none of it.
func TestMCPAppsRelayed(t *testing.T) {
	ctx := context.Background()
	up := appsUpstream(t)
	st := memStore(t)
	gw := upGateway(t, `upstreams:
  - {id: up, url: "`+up+`/", allow_mcp_ui: true}
  - {id: plain, url: "`+up+`/"}
profiles:
  - {name: ui, allow_mcp_ui: true}
  - {name: noui}
`, st, nil)
	base := serve(t, gw)
	waitFor(t, "the upstreams' tools", func() bool { return listed(gw, "mcp.up.show") && listed(gw, "mcp.plain.show") })

	host := appsConnect(t, base+"/ui", true)
	tools := toolsByName(t, host)
	if _, ok := tools[wire("mcp.up.refresh")]; ok {
		t.Error("the app-only tool is listed")
	}
	if _, ok := tools[wire("mcp.plain.refresh")]; ok {
		t.Error("the app-only tool of an upstream without allow_mcp_ui is listed")
	}
	if ui, _ := tools[wire("mcp.up.show")].Meta["ui"].(map[string]any); ui["resourceUri"] != "ui://mcp.up/w/d" {
		t.Errorf("show's _meta.ui %v, want resourceUri ui://mcp.up/w/d", ui)
	}
	if m := tools[wire("mcp.plain.show")].Meta; m["ui"] != nil {
		t.Errorf("plain's show has _meta.ui %v", m)
	}
	for id, want := range map[string]string{"up": "negotiated", "plain": "not negotiated"} {
		res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp." + id + ".caps")})
		if err != nil || textOf(res) != want {
			t.Errorf("%s's caps: %v %v, want %s", id, res, err, want)
		}
	}

	lr, err := host.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	if got := strings.Join(uris, " "); !strings.Contains(got, "ui://mcp.up/w/d") || strings.Contains(got, "ui://w/d") || !strings.Contains(got, "file:///note") {
		t.Errorf("resources/list %v, want ui://mcp.up/w/d (once, from up), file:///note, no ui://w/d", uris)
	}
	rr, err := host.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://mcp.up/w/d"})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("resources/read: %v %v", rr, err)
	}
	c := rr.Contents[0]
	meta, _ := json.Marshal(c.Meta)
	if c.URI != "ui://mcp.up/w/d" || c.MIMEType != mcpapps.MIMEType || !strings.Contains(c.Text, "<!DOCTYPE html>") ||
		string(meta) != `{"ui":{"csp":{"connectDomains":["https://api.example"]},"permissions":{"camera":{}}}}` {
		t.Errorf("resources/read: %+v, _meta %s", c, meta)
	}
	for _, uri := range []string{"ui://w/d", "ui://mcp.plain/w/d", "ui://mcp.nobody/w/d"} {
		if _, err := host.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resources/read %s answered, want not found", uri)
		}
	}
	for _, name := range []string{wire("mcp.up.refresh"), "refresh"} {
		res, err := host.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil || res.IsError || textOf(res) != "refreshed" {
			t.Errorf("the app calls %s: %v %v, want refreshed", name, res, err)
		}
	}

	model := appsConnect(t, base+"/ui", false)
	res, err := model.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.refresh")})
	if err != nil || !res.IsError || !strings.Contains(string(mustJSON(t, res)), "PERMISSION_DENIED") {
		t.Errorf("a client without apps calls the app-only tool: %+v %v, want PERMISSION_DENIED", res, err)
	}
	waitFor(t, "the refusal's audit row", func() bool {
		rows, _ := st.Audit().Query(ctx, store.AuditQuery{Limit: 100})
		for _, r := range rows {
			if r.Tool == "mcp.up.refresh" && r.Decision == "app_only" && r.Outcome == "PERMISSION_DENIED" {
				return true
			}
		}
		return false
	})
	if _, err := model.CallTool(ctx, &mcp.CallToolParams{Name: "refresh"}); err == nil {
		t.Error("a client without apps calls the app-only tool by its server's name: answered, want unknown tool")
	}

	off := appsConnect(t, base+"/noui", true)
	for name, tl := range toolsByName(t, off) {
		if tl.Meta["ui"] != nil {
			t.Errorf("profile without apps: %s has _meta.ui", name)
		}
	}
	if lr, err := off.ListResources(ctx, nil); err != nil || strings.Contains(string(mustJSON(t, lr)), "ui://") {
		t.Errorf("profile without apps: resources/list %v %v, want no ui:// resource", lr, err)
	}
	if _, err := off.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://mcp.up/w/d"}); err == nil {
		t.Error("profile without apps: the ui:// resource is read")
	}
	for _, name := range []string{wire("mcp.up.refresh"), "refresh"} {
		if _, err := off.CallTool(ctx, &mcp.CallToolParams{Name: name}); err == nil {
			t.Errorf("profile without apps: %s answered, want unknown tool", name)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
