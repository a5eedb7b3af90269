// The AI SDK's MCP client (@ai-sdk/mcp, with ai): createMCPClient. It discovers 2026-07-28 with
// server/discover by default; protocolVersionDiscovery: false makes it initialize as
// 2025-11-25. It has no progress API. See common.mjs for the arguments and the output.
import { load, parseArgs, Report, outcome, echoArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("ai-sdk", "@ai-sdk/mcp", args);
const { createMCPClient } = await load("@ai-sdk/mcp");

// protocolVersionDiscovery: false initializes as 2025-11-25 instead of discovering 2026-07-28.
const legacy = args.protocol === "2025-11-25" ? { protocolVersionDiscovery: false } : {};
let client;
if (args.url) {
  const { url, token } = args;
  // snippet
  client = await createMCPClient({
    transport: { type: "http", url, headers: { Authorization: `Bearer ${token}` } },
    ...legacy, // (option)
  });
  // end snippet
} else {
  const { Experimental_StdioMCPTransport } = await load("@ai-sdk/mcp/mcp-stdio");
  const transport = new Experimental_StdioMCPTransport({ command: args.command[0], args: args.command.slice(1) });
  client = await createMCPClient({ transport, ...legacy });
}
// generateText({ model, tools, prompt }) from "ai" lets the model call them.
const tools = await client.tools();
report.out.protocol = client.protocolVersion ?? null;
report.out.tools = Object.keys(tools);

// execute is what generateText runs when the model calls the tool.
const opts = { toolCallId: "call-1", messages: [] };
await report.step("echo", async () => outcome(await tools[args.echo].execute(echoArgs(args.message), opts)));
report.skip("progress", "no progress API: callTool and tools() take no progress callback");
await report.step("write", async () => outcome(await tools[args.write].execute({}, opts)));
// Not offered by tools(): a name the model made up is refused by generateText itself, so the
// client's own callTool reaches the server with it.
await report.step("unknown", async () => outcome(await client.callTool({ name: args.unknown, arguments: {} })));
await client.close();
report.print();
