// A client of the MCP tasks extension (io.modelcontextprotocol/tasks, SEP-2663) built on the
// pinned @modelcontextprotocol/ext-tasks requester and the v2 TypeScript SDK client, as an
// application would call a tool that may become a task.
//
//   LEGATE_PEERS_DIR=DIR node tasks-client.mjs URL TOKEN CALLS
//
// CALLS is a JSON array of {"name": TOOL, "arguments": {...}, "cancel": bool, "handoff": bool}
// or {"resume": REFERENCE}. The client speaks
// 2026-07-28 (versionNegotiation pin); ext-tasks sends its task requests through rawDispatch, one
// stateless POST each with the protocol's headers, since the SDK's own codecs do not carry them.
// Each call is settled: its execution's kind ("immediate" or "task"), the task states it saw,
// the questions it was asked (answered as a user accepting: confirm true), and its outcome
// (completed with the result, failed with the error, cancelled). With cancel, a task is
// cancelled once it is seen working. With handoff, a task is not settled: its serialized
// reference is printed (as an application persists it to come back later), and a resume entry
// takes such a reference up again in this session and settles it. The client declares
// elicitation (form) besides the extension. Prints one JSON object: {"protocol", "calls": [...]}.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { load } from "./clients/common.mjs";

const [url, token, callsArg] = process.argv.slice(2);
if (!url || !token || !callsArg) throw new Error("usage: tasks-client.mjs URL TOKEN CALLS");
const calls = JSON.parse(callsArg);

const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
// ext-tasks exports only for import, which the peers folder's require cannot resolve: its file.
const { createTaskSessionFromClient } = await import(pathToFileURL(join(process.env.LEGATE_PEERS_DIR,
  "node_modules/@modelcontextprotocol/ext-tasks/dist/client/index.js")).href);

const protocolVersion = "2026-07-28";
const clientInfo = { name: "tasks-client", version: "1.0.0" };
const clientCapabilities = { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } };

const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: protocolVersion } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
}));

// rawDispatch posts a request (its method and params: the host writes the JSON-RPC envelope)
// as a stateless 2026-07-28 request and returns the JSON-RPC response, from a JSON body or an
// event stream's message of its id.
let lastID = 0;
async function rawDispatch(call, options) {
  const request = { jsonrpc: "2.0", id: ++lastID, ...call };
  const name = request.params?.name ?? request.params?.taskId ?? request.params?.uri;
  const headers = {
    Authorization: `Bearer ${token}`,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "Mcp-Protocol-Version": protocolVersion,
    "Mcp-Method": request.method,
    ...(name !== undefined ? { "Mcp-Name": String(name) } : {}),
    ...(options?.headers ?? {}),
  };
  const resp = await fetch(url, { method: "POST", headers, body: JSON.stringify(request), signal: options?.signal });
  const text = await resp.text();
  if ((resp.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (!data) continue;
      const msg = JSON.parse(data);
      if (msg.id === request.id) return msg;
    }
    throw new Error(`no response to request ${request.id} in the event stream (HTTP ${resp.status})`);
  }
  return JSON.parse(text);
}

// A task's question (input_required) is answered as its user would: an elicitation accepted
// with confirm: true. Each is recorded with the call it came for.
let asked = [];
const session = createTaskSessionFromClient(client, {
  endpointId: "legate",
  onInputRequest: async (request) => {
    asked.push({ kind: request.kind, message: request.params?.message ?? null });
    if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind} request`);
    return { action: "accept", content: { confirm: true } };
  },
  rawDispatch,
  v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities },
});

const out = { protocol: client.getNegotiatedProtocolVersion() ?? null, calls: [] };
for (const c of calls) {
  const record = { name: c.name, states: [] };
  asked = [];
  try {
    const execution = c.resume ? await session.resumeTask(c.resume) : await session.callTool(c.name, c.arguments ?? {});
    record.kind = execution.kind;
    record.taskId = execution.handle?.taskId ?? null;
    if (c.handoff && execution.kind === "task") {
      await execution.handoff((reference) => { record.reference = reference; });
      out.calls.push(record);
      continue;
    }
    const { outcome } = await execution.settle({
      onEvent: async (event) => {
        if (event.type !== "task") return;
        record.states.push(event.task.status);
        if (c.cancel && event.task.status === "working" && !record.cancelled) {
          record.cancelled = true;
          await execution.cancel();
        }
      },
    });
    record.status = outcome.status;
    record.asked = asked;
    if (outcome.status === "completed") record.result = outcome.result;
    if (outcome.status === "failed") record.error = { message: outcome.error.message, code: outcome.error.code ?? null };
  } catch (e) {
    record.exception = { name: e?.name ?? "Error", message: String(e?.message ?? e), code: e?.code ?? null, cause: String(e?.cause?.message ?? e?.cause ?? "") };
  }
  out.calls.push(record);
}
console.log(JSON.stringify(out));
// A process that handed a task off ends without closing the session: ext-tasks 0.2.2's
// session.close() closes every execution it still tracks, handed-off ones too, and closing an
// unsettled execution cancels its task.
if (out.calls.some((r) => r.reference)) process.exit(0);
await session.close();
await client.close();
