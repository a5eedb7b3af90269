// An MCP Apps server (io.modelcontextprotocol/ui) over stdio, built with the pinned
// @modelcontextprotocol/ext-apps server helpers (registerAppTool, registerAppResource) on
// @modelcontextprotocol/server; the package ships no runnable example server.
//
//   LEGATE_PEERS_DIR=DIR node apps-server.mjs
//
// To a client that negotiates the extension (capabilities.extensions["io.modelcontextprotocol/ui"]
// with the app mime type) it offers, as the spec's "Server Behavior" has it:
//   - show_weather: visible to the model and the app, _meta.ui.resourceUri ui://weather/dashboard.html;
//   - refresh_weather: visible to the app only (_meta.ui.visibility ["app"]);
//   - ui://weather/dashboard.html: text/html;profile=mcp-app, with _meta.ui csp, permissions,
//     domain and prefersBorder, in its listing and in what resources/read returns.
// To any other client, show_weather without a UI and nothing else of the app. ui_negotiated,
// offered to both, answers the extension's settings the client declared (or null).
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const peers = process.env.LEGATE_PEERS_DIR;
if (!peers) throw new Error("LEGATE_PEERS_DIR is not set");
const require = createRequire(join(peers, "package.json"));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { McpServer } = await load("@modelcontextprotocol/server");
const { StdioServerTransport } = await load("@modelcontextprotocol/server/stdio");
const { registerAppTool, registerAppResource, getUiCapability, RESOURCE_MIME_TYPE } = await load("@modelcontextprotocol/ext-apps/server");
const { z } = await load("zod");

const uri = "ui://weather/dashboard.html";
const uiMeta = {
  csp: { connectDomains: ["https://api.weather.example"], resourceDomains: ["https://cdn.weather.example"] },
  permissions: { geolocation: {}, clipboardWrite: {} },
  domain: "weather.apps.example",
  prefersBorder: true,
};
const html = `<!DOCTYPE html><html><head><title>Weather</title></head><body><div id="w">weather</div></body></html>`;

const server = new McpServer({ name: "apps-weather", version: "1.0.0" });

const show = registerAppTool(server, "show_weather", {
  description: "Show the weather of a city on a dashboard",
  inputSchema: { city: z.string() },
  _meta: { ui: { resourceUri: uri, visibility: ["model", "app"] } },
}, ({ city }) => ({
  content: [{ type: "text", text: `sunny in ${city}` }],
  structuredContent: { city, conditions: "sunny" },
}));

const refresh = registerAppTool(server, "refresh_weather", {
  description: "Refresh the dashboard's data (the app's button)",
  inputSchema: { city: z.string() },
  _meta: { ui: { resourceUri: uri, visibility: ["app"] } },
}, ({ city }) => ({ content: [{ type: "text", text: `refreshed ${city}` }] }));

const page = registerAppResource(server, "Weather dashboard", uri, {
  description: "The weather dashboard view",
  _meta: { ui: uiMeta },
}, () => ({ contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: { ui: uiMeta } }] }));

server.registerTool("ui_negotiated", {
  description: "The MCP Apps settings the client declared, or null",
}, () => ({ content: [{ type: "text", text: JSON.stringify(getUiCapability(server.server.getClientCapabilities()) ?? null) }] }));

// Once the client has said what it supports: without the extension, no app.
server.server.oninitialized = () => {
  const cap = getUiCapability(server.server.getClientCapabilities());
  if (cap?.mimeTypes?.includes(RESOURCE_MIME_TYPE)) return;
  refresh.disable();
  page.disable();
  show._meta = undefined;
};

await server.connect(new StdioServerTransport());
