// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli): one process per method, as a
// user or a script runs it. It runs the v1 TypeScript SDK client, so it speaks 2025-11-25 only,
// and it has no progress option. See common.mjs for the arguments and the output.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, Report, outcome, describe } from "./common.mjs";

const args = parseArgs();
const report = new Report("inspector-cli", "@modelcontextprotocol/inspector-cli", args);
if (args.protocol === "2026-07-28") throw new Error("inspector-cli speaks 2025-11-25 and earlier only");
const peers = process.env.LEGATE_PEERS_DIR;
const cli = join(peers, "node_modules/@modelcontextprotocol/inspector-cli/build/cli.js");
// It crashes unless the parent of its working directory holds a package.json.
const cwd = join(peers, "run");
mkdirSync(cwd, { recursive: true });

let target, tmp;
if (args.url) {
  // npx @modelcontextprotocol/inspector-cli --cli URL --transport http --header "Authorization: Bearer TOKEN" --method tools/list
  target = [args.url, "--transport", "http", "--header", `Authorization: Bearer ${args.token}`];
} else {
  // A server's own flags (legate's --config) would be read as the inspector's: the command goes
  // in an mcpServers file.
  tmp = mkdtempSync(join(tmpdir(), "inspector-"));
  const file = join(tmp, "servers.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { legate: { type: "stdio", command: args.command[0], args: args.command.slice(1) } } }));
  target = ["--config", file, "--server", "legate"];
}

// inspector runs one method and returns its JSON output; it exits 1 on a JSON-RPC error.
function inspector(...method) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, "--cli", ...target, ...method], { cwd, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${stderr.trim() || stdout.trim() || err.message}`));
      try { resolve(JSON.parse(stdout)); } catch (e) { reject(new Error(`output is not JSON: ${stdout}`)); }
    });
  });
}
const call = (name, toolArgs = []) =>
  inspector("--method", "tools/call", "--tool-name", name, ...(toolArgs.length ? ["--tool-arg", ...toolArgs] : []));

await report.step("tools", async () => (await inspector("--method", "tools/list")).tools.map((t) => t.name));
report.skip("progress", "no progress option: the CLI sends no progress token");
// One process each, side by side: each connects anew.
await Promise.all([
  report.step("echo", async () => outcome(await call(args.echo, [`message=${JSON.stringify(args.message)}`]))),
  report.step("write", async () => outcome(await call(args.write))),
  report.step("unknown", async () => outcome(await call(args.unknown))),
]);
if (tmp) rmSync(tmp, { recursive: true, force: true });
report.print();
