package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP Apps extension's names, as the spec (SEP-1865) writes them.
const (
	appsExtension = "io.modelcontextprotocol/ui"
	appsMIME      = "text/html;profile=mcp-app"
)

// TestMCPApps: an MCP Apps server built on the pinned @modelcontextprotocol/ext-apps
// (e2e/node/apps-server.mjs) behind Legate, twice: upstream "apps" with allow_mcp_ui, "plain"
// without. A client that renders nothing but checks every field, on /mcp/ui (a profile with
// allow_mcp_ui) in both protocol eras, sees the extension declared, show_weather's _meta.ui
// with the resource URI in Legate's namespace (ui://mcp.apps/…), reads that ui:// resource
// through Legate with its mime type and its CSP, permissions, domain and border, and calls the
// app-only refresh_weather, which is in no tools/list, as the app, through the policy (held for
// approval, approved, run), by Legate's name and by its server's own, as the app's HTML names
// it. Legate negotiates the extension with "apps" only. A client that did
// not negotiate apps cannot call the app-only tool; /mcp/noui (a profile without it) sees none
// of it: no _meta.ui, no ui:// resource, no app-only tool.
func TestMCPApps(t *testing.T) {
	p := need(t)
	t.Parallel()

	config := filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf(`upstreams:
  - id: apps
    command: %[1]s
    env: {LEGATE_PEERS_DIR: %[2]q}
    allow_mcp_ui: true
  - id: plain
    command: %[1]s
    env: {LEGATE_PEERS_DIR: %[2]q}
profiles:
  - {name: ui, allow_mcp_ui: true}
  - {name: noui}
approvals:
  wait: %[3]s
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
  rules:
    - {tool: "mcp.apps.refresh_weather", action: approve}
`, yamlFlow(p.node, p.apps), p.dir, approvalWait)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	refreshUpstreams(t, config, state, "apps", "plain")
	s := serveState(t, config, state)
	base := s.url("127.0.0.1")
	approve := func(id string) {
		legateRun(t, nil, "approvals", "approve", id, "--config", config, "--state-dir", state)
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("apps on "+version, func(t *testing.T) {
			cs := appsClient(t, base+"/ui", version, true)
			if _, ok := cs.InitializeResult().Capabilities.Extensions[appsExtension]; !ok {
				t.Errorf("initialize: capabilities.extensions %v, want %s", cs.InitializeResult().Capabilities.Extensions, appsExtension)
			}

			tools := listTools(t, cs)
			if _, ok := tools["mcp__apps__refresh_weather"]; ok {
				t.Error("tools/list holds the app-only mcp__apps__refresh_weather")
			}
			show, ok := tools["mcp__apps__show_weather"]
			if !ok {
				t.Fatalf("tools/list lacks mcp__apps__show_weather: %v", slices.Sorted(maps.Keys(tools)))
			}
			const local = "ui://mcp.apps/weather/dashboard.html"
			ui, _ := show.Meta["ui"].(map[string]any)
			if ui["resourceUri"] != local || show.Meta["ui/resourceUri"] != local {
				t.Errorf("show_weather _meta %v, want ui.resourceUri and ui/resourceUri %s", show.Meta, local)
			}
			if !reflect.DeepEqual(ui["visibility"], []any{"model", "app"}) {
				t.Errorf("show_weather _meta.ui.visibility %v, want [model app]", ui["visibility"])
			}
			if m := tools["mcp__plain__show_weather"].Meta; m["ui"] != nil || m["ui/resourceUri"] != nil {
				t.Errorf("plain's show_weather (allow_mcp_ui off) has UI metadata: %v", m)
			}
			if _, ok := tools["mcp__plain__refresh_weather"]; ok {
				t.Error("plain's app-only tool (allow_mcp_ui off) is listed")
			}

			// Legate declares the extension to "apps" alone.
			if got := appCallText(t, cs, "mcp__apps__ui_negotiated", nil); !strings.Contains(got, appsMIME) {
				t.Errorf("apps saw the client settings %s, want the extension with %s", got, appsMIME)
			}
			if got := appCallText(t, cs, "mcp__plain__ui_negotiated", nil); got != "null" {
				t.Errorf("plain saw the client settings %s, want null (not negotiated)", got)
			}
			if got := appCallText(t, cs, "mcp__apps__show_weather", map[string]any{"city": "Oslo"}); got != "sunny in Oslo" {
				t.Errorf("show_weather: %q", got)
			}

			// The ui:// resource: listed and read under Legate's URI, every field kept.
			var listed *mcp.Resource
			for _, r := range listResources(t, cs) {
				if strings.HasPrefix(r.URI, "ui://") && r.URI != local {
					t.Errorf("resources/list has %s, want ui:// resources only as ui://mcp.<upstream>/…", r.URI)
				}
				if r.URI == local {
					listed = r
				}
			}
			if listed == nil || listed.MIMEType != appsMIME {
				t.Fatalf("resources/list: %s is %+v, want it with mimeType %s", local, listed, appsMIME)
			}
			checkUIMeta(t, "resources/list", listed.Meta)
			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: local})
			if err != nil || len(read.Contents) != 1 {
				t.Fatalf("resources/read %s: %+v, %v", local, read, err)
			}
			c := read.Contents[0]
			if c.URI != local || c.MIMEType != appsMIME || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") {
				t.Errorf("resources/read: uri %q mimeType %q text %.40q, want %s, %s and the HTML", c.URI, c.MIMEType, c.Text, local, appsMIME)
			}
			checkUIMeta(t, "resources/read", c.Meta)
			if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://weather/dashboard.html"}); err == nil {
				t.Error("resources/read of the upstream's own ui:// URI answered, want not found")
			}

			// The app calls the app-only tool: the policy holds it, an approval runs it.
			city := "app-" + nonce()
			args := map[string]any{"city": city}
			res := appCall(t, cs, "mcp__apps__refresh_weather", args)
			id := gatewayError(t, "refresh_weather (first call)", res, "APPROVAL_PENDING")
			if id == "" {
				t.Fatalf("refresh_weather: no approval id in %+v", res)
			}
			approve(id)
			if got := appCallText(t, cs, "mcp__apps__refresh_weather", args); got != "refreshed "+city {
				t.Errorf("refresh_weather after approval: %q, want %q", got, "refreshed "+city)
			}
			// The app's HTML names the tool as its server does; the host sends that name.
			if got := appCallText(t, cs, "refresh_weather", args); got != "refreshed "+city {
				t.Errorf("refresh_weather by its server's own name: %q, want the approved call's %q", got, "refreshed "+city)
			}
		})
	}

	t.Run("client without apps", func(t *testing.T) {
		cs := appsClient(t, base+"/ui", "2025-11-25", false)
		if _, ok := listTools(t, cs)["mcp__apps__refresh_weather"]; ok {
			t.Error("tools/list holds the app-only tool")
		}
		res := appCall(t, cs, "mcp__apps__refresh_weather", map[string]any{"city": "x"})
		gatewayError(t, "refresh_weather by a client without apps", res, "PERMISSION_DENIED")
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "refresh_weather", Arguments: map[string]any{"city": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("refresh_weather by its server's name, from a client without apps: %v, want unknown tool", err)
		}
	})

	t.Run("profile without apps", func(t *testing.T) {
		cs := appsClient(t, base+"/noui", "2025-11-25", true)
		tools := listTools(t, cs)
		for name, tl := range tools {
			if tl.Meta["ui"] != nil || tl.Meta["ui/resourceUri"] != nil {
				t.Errorf("%s has UI metadata: %v", name, tl.Meta)
			}
		}
		if _, ok := tools["mcp__apps__show_weather"]; !ok {
			t.Error("show_weather is gone, want it without its UI")
		}
		for _, r := range listResources(t, cs) {
			if strings.HasPrefix(r.URI, "ui://") {
				t.Errorf("resources/list has %s", r.URI)
			}
		}
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://mcp.apps/weather/dashboard.html"}); err == nil {
			t.Error("resources/read of the app's resource answered, want not found")
		}
		for _, name := range []string{"mcp__apps__refresh_weather", "refresh_weather"} {
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"city": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("%s: %v, want unknown tool", name, err)
			}
		}
	})
}

// appsClient connects a go-sdk client to url at protocol version, declaring MCP Apps (HTML)
// when apps is set.
func appsClient(t *testing.T, url, version string, apps bool) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	if apps {
		caps.AddExtension(appsExtension, map[string]any{"mimeTypes": []string{appsMIME}})
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "apps-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s at %s: %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("negotiated %s, want %s", v, version)
	}
	return cs
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func listResources(t *testing.T, cs *mcp.ClientSession) []*mcp.Resource {
	t.Helper()
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	return res.Resources
}

func appCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// appCallText calls name and returns its text, failing t on an error result.
func appCallText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res := appCall(t, cs, name, args)
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if res.IsError {
		t.Errorf("%s: error result %q", name, texts)
	}
	return strings.Join(texts, "\n")
}

// gatewayError checks that res is Legate's error of code and returns its approval id, if any.
func gatewayError(t *testing.T, what string, res *mcp.CallToolResult, code string) string {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var sc struct {
		Error struct {
			Code, Message string
			ApprovalID    string `json:"approval_id"`
		}
	}
	_ = json.Unmarshal(b, &sc)
	if !res.IsError || sc.Error.Code != code {
		t.Errorf("%s: isError %t, error %+v, want %s", what, res.IsError, sc.Error, code)
	}
	return sc.Error.ApprovalID
}

// checkUIMeta checks the _meta.ui apps-server.mjs gives its resource.
func checkUIMeta(t *testing.T, what string, meta mcp.Meta) {
	t.Helper()
	b, _ := json.Marshal(meta["ui"])
	want := `{"csp":{"connectDomains":["https://api.weather.example"],"resourceDomains":["https://cdn.weather.example"]},` +
		`"domain":"weather.apps.example","permissions":{"clipboardWrite":{},"geolocation":{}},"prefersBorder":true}`
	if string(b) != want {
		t.Errorf("%s: _meta.ui %s, want %s", what, b, want)
	}
}
