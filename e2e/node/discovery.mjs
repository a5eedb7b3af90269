// Progressive discovery through the TypeScript SDK (@modelcontextprotocol/sdk, pinned by
// scripts/peers.sh):
//
//   LEGATE_PEERS_DIR=DIR node discovery.mjs URL QUERY ARGS_JSON
//
// Connects over Streamable HTTP, lists the tools, calls legate__search_tools with QUERY,
// waits for notifications/tools/list_changed (at most 10 s), lists again, and calls the first
// tool found with ARGS_JSON. Prints one JSON object: {first: [names], found: [names],
// changed: bool, second: [names], call: result | {error}}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const peers = process.env.LEGATE_PEERS_DIR;
if (!peers) throw new Error("LEGATE_PEERS_DIR is not set");
const sdk = (p) => import(pathToFileURL(join(peers, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = await sdk("types.js");

const [url, query, args] = process.argv.slice(2);
const client = new Client({ name: "legate-e2e-discovery", version: "0.0.1" });
let changed;
const listChanged = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed(true));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const out = {};
out.first = (await client.listTools()).tools.map((t) => t.name);
const search = await client.callTool({ name: "legate__search_tools", arguments: { query, limit: 3 } });
out.found = (search.structuredContent?.tools ?? []).map((t) => t.name);
out.changed = await Promise.race([listChanged, new Promise((resolve) => setTimeout(() => resolve(false), 10000))]);
out.second = (await client.listTools()).tools.map((t) => t.name);
try {
  out.call = await client.callTool({ name: out.found[0], arguments: JSON.parse(args) });
} catch (e) {
  out.call = { error: { code: e.code, message: e.message } };
}
await client.close();
console.log(JSON.stringify(out));
