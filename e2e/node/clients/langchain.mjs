// LangChain's MCP adapters (@langchain/mcp-adapters, with @langchain/core and
// @langchain/langgraph): MultiServerMCPClient, whose tools are LangChain tools. It runs the v1
// TypeScript SDK client, so it speaks 2025-11-25 only. Progress: onProgress. It calls only the
// tools it listed. See common.mjs for the arguments and the output.
import { load, parseArgs, Report, outcome, echoArgs, progressArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("langchain", "@langchain/mcp-adapters", args);
if (args.protocol === "2026-07-28") throw new Error("@langchain/mcp-adapters speaks 2025-11-25 and earlier only");
const { MultiServerMCPClient } = await load("@langchain/mcp-adapters");

const notifications = [];
let client;
if (args.url) {
  const { url, token } = args;
  // snippet
  client = new MultiServerMCPClient({
    mcpServers: {
      legate: { transport: "http", url, headers: { Authorization: `Bearer ${token}` } },
    },
    onProgress: (p) => notifications.push(p),
  });
  // end snippet
} else {
  client = new MultiServerMCPClient({
    mcpServers: { legate: { transport: "stdio", command: args.command[0], args: args.command.slice(1) } },
    onProgress: (p) => notifications.push(p),
  });
}
// createAgent({ model, tools }) from langchain, or a LangGraph ToolNode, runs them.
const tools = await client.getTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
report.out.tools = Object.keys(byName);
// A tool's content is a string, an array of blocks, or — for one text block with structured
// content or _meta (Legate's provenance) — that one block, carrying them.
const text = (content) =>
  outcome({ content: typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [content] });

// invoke is what an agent runs when the model calls the tool; it gives the result's content.
await report.step("echo", async () => text(await byName[args.echo].invoke(echoArgs(args.message))));
await report.step("progress", async () => {
  notifications.length = 0;
  const r = await byName[args.progress].invoke(progressArgs);
  return { ...text(r), notifications: notifications.map(({ progress, total }) => ({ progress, total })) };
});
await report.step("write", async () => text(await byName[args.write].invoke({})));
report.skip("unknown", "calls only the tools it listed: no API calls a tool by name");
await client.close();
report.print();
