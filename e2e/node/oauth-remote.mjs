// mcp-remote pointed at Legate with no token: it discovers Legate's
// authorization server, registers itself, prints the authorization URL
// on stderr (the test's user agent logs in and consents), takes the code
// at its callback on 127.0.0.1, then lists the tools and calls one.
// Usage: node oauth-remote.mjs URL CALLBACK_PORT TOOL; prints
// {"tools": [...], "call": {...}} on stdout.
import { join } from "node:path";
import { load } from "./clients/common.mjs";

const [url, port, tool] = process.argv.slice(2);
const peers = process.env.LEGATE_PEERS_DIR;
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
const bridge = join(peers, "node_modules/mcp-remote/dist/proxy.js");
const loopback = join(import.meta.dirname, "loopback.cjs");

const client = new Client({ name: "desktop-app", version: "1.0.0" });
await client.connect(new StdioClientTransport({
  command: process.execPath,
  args: ["-r", loopback, bridge, url, port, "--host", "127.0.0.1", "--transport", "http-only"],
  stderr: "inherit",
  env: { ...process.env },
}));
const tools = (await client.listTools()).tools.map((t) => t.name);
const call = await client.callTool({ name: tool, arguments: { method: "GET", url: "http://192.0.2.1/" } });
await client.close();
process.stdout.write(JSON.stringify({ tools, call }) + "\n");
