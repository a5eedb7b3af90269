// The OpenAI Agents SDK (@openai/agents): MCPServerStreamableHttp and MCPServerStdio, which an
// Agent takes in mcpServers. They run the v2 TypeScript SDK client in "auto" negotiation
// (2026-07-28 when the server offers it), with no option to choose, and no progress API. See
// common.mjs for the arguments and the output.
import { load, parseArgs, Report, outcome, echoArgs, progressArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("openai-agents", "@openai/agents", args);
if (args.protocol !== "default") throw new Error("@openai/agents negotiates its protocol itself");
const { MCPServerStreamableHttp, MCPServerStdio } = await load("@openai/agents");

let server;
if (args.url) {
  const { url, token } = args;
  // snippet
  server = new MCPServerStreamableHttp({
    url,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await server.connect();
  // end snippet
} else {
  server = new MCPServerStdio({ command: args.command[0], args: args.command.slice(1) });
  await server.connect();
}
// new Agent({ name: "assistant", mcpServers: [server] }) offers the model these tools.
const tools = await server.listTools();
report.out.protocol = server.session?.getNegotiatedProtocolVersion?.() ?? null;
report.out.tools = tools.map((t) => t.name);

await report.step("echo", async () => outcome(await server.callToolResult(args.echo, echoArgs(args.message))));
report.skip("progress", "no progress API: MCPServer.callTool takes no progress callback");
await report.step("write", async () => outcome(await server.callToolResult(args.write, {})));
await report.step("unknown", async () => outcome(await server.callToolResult(args.unknown, {})));
await server.close();
report.print();
