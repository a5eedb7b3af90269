// Mastra's MCP client (@mastra/mcp, with @mastra/core): MCPClient. It runs the v2 TypeScript SDK
// client, in "auto" negotiation by default (2026-07-28 when the server offers it);
// protocolVersion "legacy" makes it initialize as 2025-11-25. Progress: enableProgressTracking
// and progress.onUpdate. It calls only the tools it listed. See common.mjs for the arguments and
// the output.
import { load, parseArgs, Report, outcome, echoArgs, progressArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("mastra", "@mastra/mcp", args);
const { MCPClient } = await load("@mastra/mcp");

// protocolVersion: "legacy" initializes as 2025-11-25 instead of negotiating 2026-07-28.
const legacy = args.protocol === "2025-11-25" ? { protocolVersion: "legacy" } : {};
let mcp;
if (args.url) {
  const { url, token } = args;
  // snippet
  mcp = new MCPClient({
    servers: {
      legate: {
        url: new URL(url),
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        enableProgressTracking: true,
        ...legacy, // (option)
      },
    },
  });
  // end snippet
} else {
  mcp = new MCPClient({
    servers: { legate: { command: args.command[0], args: args.command.slice(1), enableProgressTracking: true, ...legacy } },
  });
}
// new Agent({ ..., tools: await mcp.listTools() }) from @mastra/core offers the model these tools.
const tools = await mcp.listTools(); // named legate_<tool>
const notifications = [];
await mcp.progress.onUpdate("legate", (p) => notifications.push(p));
const name = (tool) => `legate_${tool}`;
report.out.tools = Object.keys(tools).map((k) => k.replace(/^legate_/, ""));
try {
  report.out.protocol = (await mcp.getConnectedClientForServer("legate")).client?.getNegotiatedProtocolVersion?.() ?? null;
} catch {}

// execute is what an Agent runs when the model calls the tool; Mastra hands back the MCP result.
await report.step("echo", async () => outcome(await tools[name(args.echo)].execute(echoArgs(args.message), {})));
await report.step("progress", async () => {
  notifications.length = 0;
  const r = await tools[name(args.progress)].execute(progressArgs, {});
  return { ...outcome(r), notifications: notifications.map(({ progress, total }) => ({ progress, total })) };
});
await report.step("write", async () => outcome(await tools[name(args.write)].execute({}, {})));
report.skip("unknown", "calls only the tools it listed: no API calls a tool by name");
await mcp.disconnect();
report.print();
