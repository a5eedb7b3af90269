// The v1 TypeScript SDK client (@modelcontextprotocol/sdk 1.x). It speaks 2025-11-25 (and
// earlier) only. It has a progress API (onprogress). See common.mjs for the arguments and the
// output.
import { load, parseArgs, Report, outcome, echoArgs, progressArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("sdk-v1", "@modelcontextprotocol/sdk", args);
if (args.protocol === "2026-07-28") throw new Error("the v1 SDK speaks 2025-11-25 and earlier only");
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");

const client = new Client({ name: "my-app", version: "1.0.0" });
let transport;
if (args.url) {
  const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { url, token } = args;
  // snippet
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  // end snippet
} else {
  const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
  transport = new StdioClientTransport({ command: args.command[0], args: args.command.slice(1), stderr: "inherit" });
  await client.connect(transport);
}
report.out.protocol = transport.protocolVersion ?? null;

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
