// Shared by the client matrix scripts (e2e/node/clients/<client>.mjs): the command line, the
// peers folder's packages, and the one JSON line each script prints.
//
//   node <client>.mjs --http URL --token TOKEN [--protocol P] [TOOLS]
//   node <client>.mjs [--protocol P] [TOOLS] -- COMMAND ARGS...        (stdio)
//
// --protocol is "default" (the client's own choice), "2025-11-25" or "2026-07-28".
// TOOLS name the tools of the scenario: --echo NAME (called with {message}, --message TEXT), --progress NAME
// (called with {duration: 1, steps: 3}, asking for progress), --write NAME (called with {}; held
// for approval), --unknown NAME (not offered by the server).
//
// The scenario: connect, list the tools, call echo, call the progress tool, call the write tool,
// call the unknown tool. Each step is recorded on its own, so one failure does not hide the
// others. The output is one JSON object (see Report).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const peers = process.env.LEGATE_PEERS_DIR;
if (!peers) throw new Error("LEGATE_PEERS_DIR is not set");

// load imports a package (or one of its exports) installed in the peers folder.
export async function load(spec) {
  const require = createRequire(join(peers, "package.json"));
  let resolved;
  try {
    resolved = import.meta.resolve(spec, pathToFileURL(join(peers, "package.json")).href);
  } catch {
    resolved = pathToFileURL(require.resolve(spec)).href;
  }
  return import(resolved);
}

// version is the installed version of a package in the peers folder.
export function version(name) {
  const require = createRequire(join(peers, "package.json"));
  return require(join(peers, "node_modules", name, "package.json")).version;
}

export function parseArgs(argv = process.argv.slice(2)) {
  const a = { protocol: "default", message: "hello", echo: "", progress: "", write: "", unknown: "", command: [] };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--") { a.command = argv.slice(i + 1); break; }
    const v = argv[++i];
    if (v === undefined) throw new Error(`${k} needs a value`);
    switch (k) {
      case "--http": a.url = v; break;
      case "--token": a.token = v; break;
      case "--protocol": a.protocol = v; break;
      case "--message": a.message = v; break;
      case "--echo": a.echo = v; break;
      case "--progress": a.progress = v; break;
      case "--write": a.write = v; break;
      case "--unknown": a.unknown = v; break;
      default: throw new Error(`unknown argument ${k}`);
    }
  }
  if (!a.url && a.command.length === 0) throw new Error("need --http URL or -- COMMAND ARGS");
  if (!["default", "2025-11-25", "2026-07-28"].includes(a.protocol)) throw new Error(`--protocol ${a.protocol}`);
  return a;
}

// Report collects the scenario's outcome: {client, version, transport, protocol, tools,
// echo, progress, write, unknown, skipped}. A step is {result} (a CallToolResult as the client
// gave it, normalised by outcome()), {error: {code, message}, thrown, code, approvalId} (the
// client threw; code and approvalId as outcome() reads them from the message), or absent and
// named in skipped with the reason.
export class Report {
  constructor(client, pkg, args) {
    this.out = { client, version: version(pkg), transport: args.url ? "http" : "stdio", protocol: null, tools: [], skipped: {} };
  }
  skip(step, reason) { this.out.skipped[step] = reason; }
  async step(name, fn) {
    try {
      this.out[name] = await fn();
    } catch (e) {
      // A client that throws on an isError result keeps the gateway's text in the message.
      const error = describe(e);
      const { code, approvalId } = outcome({ content: [{ type: "text", text: error.message }] });
      this.out[name] = { error, thrown: true, code, approvalId, text: error.message };
    }
  }
  print() { process.stdout.write(JSON.stringify(this.out) + "\n"); }
}

// describe turns a thrown error into {code, message}, with the JSON-RPC code where the client
// keeps one (on the error or its cause).
export function describe(e) {
  const message = [e?.message, e?.cause?.message].filter(Boolean).join(": ") || String(e);
  let code = e?.code ?? e?.cause?.code ?? e?.data?.code;
  if (typeof code !== "number") {
    const m = /(-32\d{3})/.exec(message);
    code = m ? Number(m[1]) : null;
  }
  return { code, message };
}

// outcome normalises a tool result: {isError, text, code, approvalId, raw}. The gateway's error
// code and approval id come from structuredContent.error (or _meta["io.legate/error"]), else
// from the text "CODE: message".
export function outcome(r) {
  const content = Array.isArray(r) ? r : r?.content ?? [];
  const text = content.filter((c) => c?.type === "text").map((c) => c.text).join("\n");
  const err = r?.structuredContent?.error ?? r?._meta?.["io.legate/error"];
  const code = err?.code ?? /\b([A-Z]+(?:_[A-Z]+)+): /.exec(text)?.[1] ?? null;
  const approvalId = err?.approval_id ?? /\b(ap_[A-Za-z0-9]+)/.exec(text)?.[1] ?? null;
  return { isError: Array.isArray(r) ? null : Boolean(r?.isError), text, code, approvalId, raw: r };
}

export const echoArgs = (msg) => ({ message: msg });
export const progressArgs = { duration: 1, steps: 3 };
