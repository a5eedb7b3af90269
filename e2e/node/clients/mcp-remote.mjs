// mcp-remote, the stdio bridge that desktop clients (Claude Desktop, Cursor, Windsurf) run to
// reach a remote server: the desktop side is played by the v1 TypeScript SDK client over stdio,
// mcp-remote speaks Streamable HTTP to Legate with the bearer token. Toward Legate it speaks
// 2025-11-25 by default ("--protocol legacy"); "--protocol auto" negotiates 2026-07-28. It relays
// progress. HTTP only: mcp-remote is itself the stdio side. See common.mjs for the arguments and
// the output.
import { join } from "node:path";
import { load, parseArgs, Report, outcome, echoArgs, progressArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("mcp-remote", "mcp-remote", args);
if (!args.url) throw new Error("mcp-remote bridges to an HTTP server: --http URL");
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
const bridge = join(process.env.LEGATE_PEERS_DIR, "node_modules/mcp-remote/dist/proxy.js");

// What a desktop client's config runs: npx mcp-remote URL --header "Authorization:Bearer ${TOKEN}"
// (--protocol auto negotiates 2026-07-28 with Legate).
const { url, token } = args;
const command = [process.execPath, bridge, url, "--header", `Authorization:Bearer ${token}`,
  "--transport", "http-only", ...(args.protocol === "2026-07-28" ? ["--protocol", "auto"] : [])];
const client = new Client({ name: "desktop-app", version: "1.0.0" });
await client.connect(new StdioClientTransport({
  command: command[0], args: command.slice(1), stderr: "inherit",
  env: { ...process.env },
}));
report.out.protocol = null; // mcp-remote answers initialize itself; Legate's side is what counts

await report.step("tools", async () => (await client.listTools()).tools.map((t) => t.name));
await report.step("echo", async () => outcome(await client.callTool({ name: args.echo, arguments: echoArgs(args.message) })));
await report.step("progress", async () => {
  const notifications = [];
  const r = await client.callTool({ name: args.progress, arguments: progressArgs }, undefined,
    { onprogress: (p) => notifications.push(p), resetTimeoutOnProgress: true });
  return { ...outcome(r), notifications };
});
await report.step("write", async () => outcome(await client.callTool({ name: args.write, arguments: {} })));
await report.step("unknown", async () => outcome(await client.callTool({ name: args.unknown, arguments: {} })));
await client.close();
report.print();
