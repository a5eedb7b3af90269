// A real MCP client: the TypeScript SDK (@modelcontextprotocol/sdk, pinned by scripts/peers.sh).
//
//   LEGATE_PEERS_DIR=DIR node client.mjs --http URL [OPTIONS] [--call NAME JSON]...
//   LEGATE_PEERS_DIR=DIR node client.mjs [OPTIONS] [--call NAME JSON]... -- COMMAND ARGS...   (stdio)
//
// Options:
//   --progress   every call asks for progress (a progress token in _meta); the notifications
//                received are kept in that call's "progress"
//   --root URI   declare the roots capability and answer roots/list with URI (repeatable); the
//                number of roots/list requests received is printed as "rootsRequests"
//   --settle MS  wait MS milliseconds after listing the tools, before the calls (a server that
//                asks for roots after initialize applies them asynchronously)
//
// Connects, lists the tools, makes each call in order, and prints one JSON object on stdout:
// {server, tools: [names], calls: [{name, result, progress?} | {name, error: {code, message}}],
// rootsRequests?}.
// With stdio the child gets this process's whole environment (secrets travel by env only) and
// its stderr goes to ours. The SDK is loaded from the peers folder, so this file needs no
// node_modules of its own.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const peers = process.env.LEGATE_PEERS_DIR;
if (!peers) throw new Error("LEGATE_PEERS_DIR is not set");
const sdk = (p) => import(pathToFileURL(join(peers, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");

const argv = process.argv.slice(2);
let url, command, calls = [], progress = false, roots = [], settle = 0;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--http") url = argv[++i];
  else if (argv[i] === "--progress") progress = true;
  else if (argv[i] === "--root") roots.push(argv[++i]);
  else if (argv[i] === "--settle") settle = Number(argv[++i]);
  else if (argv[i] === "--call") { calls.push([argv[i + 1], JSON.parse(argv[i + 2])]); i += 2; }
  else if (argv[i] === "--") { command = argv.slice(i + 1); break; }
  else throw new Error(`unknown argument ${argv[i]}`);
}

let transport;
if (url) {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(url));
} else if (command?.length) {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  transport = new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env, stderr: "inherit" });
} else throw new Error("need --http URL or -- COMMAND");

const out = { server: null, tools: [], calls: [] };
const client = new Client({ name: "legate-e2e-ts", version: "0.0.1" },
  roots.length ? { capabilities: { roots: { listChanged: true } } } : {});
if (roots.length) {
  const { ListRootsRequestSchema } = await sdk("types.js");
  out.rootsRequests = 0;
  client.setRequestHandler(ListRootsRequestSchema, () => {
    out.rootsRequests++;
    return { roots: roots.map((uri) => ({ uri, name: uri })) };
  });
}
await client.connect(transport);
out.server = client.getServerVersion();
out.tools = (await client.listTools()).tools.map((t) => t.name);
if (settle > 0) await new Promise((resolve) => setTimeout(resolve, settle));
for (const [name, args] of calls) {
  try {
    if (progress) {
      const seen = [];
      const result = await client.callTool({ name, arguments: args }, undefined,
        { onprogress: (p) => seen.push(p), resetTimeoutOnProgress: true });
      out.calls.push({ name, result, progress: seen });
    } else {
      out.calls.push({ name, result: await client.callTool({ name, arguments: args }) });
    }
  } catch (e) {
    out.calls.push({ name, error: { code: e.code, message: e.message } });
  }
}
await client.close();
console.log(JSON.stringify(out));
