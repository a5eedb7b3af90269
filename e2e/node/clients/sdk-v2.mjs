// The v2 TypeScript SDK client (@modelcontextprotocol/client). Its default negotiation is
// "legacy" (a 2025-11-25 initialize); versionNegotiation {pin: "2026-07-28"} speaks 2026-07-28.
// It has a progress API (onprogress). See common.mjs for the arguments and the output.
import { load, parseArgs, Report, outcome, echoArgs, progressArgs } from "./common.mjs";

const args = parseArgs();
const report = new Report("sdk-v2", "@modelcontextprotocol/client", args);
const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");

const options = args.protocol === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {};
let client;
if (args.url) {
  const { url, token } = args;
  // snippet
  client = new Client({ name: "my-app", version: "1.0.0" }, options); // (option)
  await client.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  // end snippet
} else {
  const { StdioClientTransport } = await load("@modelcontextprotocol/client/stdio");
  client = new Client({ name: "my-app", version: "1.0.0" }, options);
  await client.connect(new StdioClientTransport({ command: args.command[0], args: args.command.slice(1), stderr: "inherit" }));
}
report.out.protocol = client.getNegotiatedProtocolVersion() ?? null;

await report.step("tools", async () => (await client.listTools()).tools.map((t) => t.name));
await report.step("echo", async () => outcome(await client.callTool({ name: args.echo, arguments: echoArgs(args.message) })));
await report.step("progress", async () => {
  const notifications = [];
  const r = await client.callTool({ name: args.progress, arguments: progressArgs },
    { onprogress: (p) => notifications.push(p), resetTimeoutOnProgress: true });
  return { ...outcome(r), notifications };
});
await report.step("write", async () => outcome(await client.callTool({ name: args.write, arguments: {} })));
await report.step("unknown", async () => outcome(await client.callTool({ name: args.unknown, arguments: {} })));
await client.close();
report.print();
