// Many tool calls at once from real MCP clients: the TypeScript SDK (pinned by scripts/peers.sh).
//
//   LEGATE_PEERS_DIR=DIR node batch.mjs --http URL --calls FILE [OPTIONS]
//
// FILE holds a JSON array of calls, [{"name": TOOL, "arguments": {...}}, ...]. Options:
//   --clients N          connect N clients (N sessions); call i goes through client i % N (default 1)
//   --wait-tools A,B     first poll tools/list (every 200 ms, up to --wait-tools-timeout seconds,
//                        default 30) until every named tool is listed
//   --repeat-pending S   make a call again while its result is APPROVAL_PENDING, for up to S
//                        seconds after the batch started (0, the default: once)
//   --raw                send tools/call with client.request instead of client.callTool, which
//                        skips the SDK's check of structuredContent against the tool's outputSchema
//                        (callTool applies it to isError results too)
//
// Every call of the batch starts at once (after the optional tools/list polling); the line
// "calling" goes to stderr just before. Prints one JSON object on stdout:
// {tools: [names], toolsWaitMs, calls: [{name, arguments, attempts: [{result, ms} | {error: {code,
// message}, ms}]}]}, the attempts in order, each with its duration in milliseconds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const peers = process.env.LEGATE_PEERS_DIR;
if (!peers) throw new Error("LEGATE_PEERS_DIR is not set");
const sdk = (p) => import(pathToFileURL(join(peers, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CallToolResultSchema } = await sdk("types.js");

const argv = process.argv.slice(2);
let url, callsFile, clients = 1, waitTools = [], waitToolsTimeout = 30, repeatPending = 0, raw = false;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--http") url = argv[++i];
  else if (a === "--calls") callsFile = argv[++i];
  else if (a === "--clients") clients = Number(argv[++i]);
  else if (a === "--wait-tools") waitTools = argv[++i].split(",").filter(Boolean);
  else if (a === "--wait-tools-timeout") waitToolsTimeout = Number(argv[++i]);
  else if (a === "--repeat-pending") repeatPending = Number(argv[++i]);
  else if (a === "--raw") raw = true;
  else throw new Error(`unknown argument ${a}`);
}
if (!url || !callsFile) throw new Error("need --http URL and --calls FILE");
const calls = JSON.parse(readFileSync(callsFile, "utf8"));

const conns = [];
for (let i = 0; i < Math.max(1, clients); i++) {
  const c = new Client({ name: `legate-e2e-batch-${i}`, version: "0.0.1" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  conns.push(c);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = { tools: [], toolsWaitMs: 0, calls: [] };
const listStart = Date.now();
for (;;) {
  out.tools = (await conns[0].listTools()).tools.map((t) => t.name);
  if (waitTools.every((n) => out.tools.includes(n))) break;
  if (Date.now() - listStart > waitToolsTimeout * 1000) break; // the caller sees what is missing
  await sleep(200);
}
out.toolsWaitMs = Date.now() - listStart;

const pending = (r) => r?.isError && r?.structuredContent?.error?.code === "APPROVAL_PENDING";
const start = Date.now();
process.stderr.write("calling\n");
out.calls = await Promise.all(calls.map(async ({ name, arguments: args }, i) => {
  const client = conns[i % conns.length];
  const attempts = [];
  for (;;) {
    const t0 = Date.now();
    try {
      const params = { name, arguments: args };
      const result = raw
        ? await client.request({ method: "tools/call", params }, CallToolResultSchema)
        : await client.callTool(params);
      attempts.push({ result, ms: Date.now() - t0 });
      if (!pending(result) || Date.now() - start > repeatPending * 1000) break;
    } catch (e) {
      attempts.push({ error: { code: e.code, message: e.message }, ms: Date.now() - t0 });
      break;
    }
  }
  return { name, arguments: args, attempts };
}));
await Promise.all(conns.map((c) => c.close()));
console.log(JSON.stringify(out));
