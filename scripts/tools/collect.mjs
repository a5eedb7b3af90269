// collect.mjs starts each MCP server of package.json over stdio, with
// dummy credentials (listing tools needs none of them), calls tools/list
// and writes search/testdata/tools/<id>.json. Run by scripts/collect-tools.sh.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";

const [modules, out] = process.argv.slice(2);
const scratch = mkdtempSync(join(tmpdir(), "legate-collect-"));

// id: the upstream id the tools are named under (mcp.<id>.<tool>).
// Left out, as they cannot list tools here: server-redis (connects at
// start), server-gdrive (needs OAuth credentials), @stripe/mcp and
// @supabase/mcp-server-supabase (ask their hosted servers for the list).
const servers = [
  { id: "everything", pkg: "@modelcontextprotocol/server-everything", args: ["stdio"] },
  { id: "filesystem", pkg: "@modelcontextprotocol/server-filesystem", args: [scratch] },
  { id: "memory", pkg: "@modelcontextprotocol/server-memory", env: { MEMORY_FILE_PATH: join(scratch, "memory.jsonl") } },
  { id: "github", pkg: "@modelcontextprotocol/server-github", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" } },
  { id: "gitlab", pkg: "@modelcontextprotocol/server-gitlab", env: { GITLAB_PERSONAL_ACCESS_TOKEN: "dummy", GITLAB_API_URL: "http://127.0.0.1:9/api/v4" } },
  { id: "slack", pkg: "@modelcontextprotocol/server-slack", env: { SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T00000000" } },
  { id: "postgres", pkg: "@modelcontextprotocol/server-postgres", args: ["postgresql://127.0.0.1:9/none"] },
  { id: "puppeteer", pkg: "@modelcontextprotocol/server-puppeteer" },
  { id: "brave-search", pkg: "@modelcontextprotocol/server-brave-search", env: { BRAVE_API_KEY: "dummy" } },
  { id: "google-maps", pkg: "@modelcontextprotocol/server-google-maps", env: { GOOGLE_MAPS_API_KEY: "dummy" } },
  { id: "sequential-thinking", pkg: "@modelcontextprotocol/server-sequential-thinking" },
  { id: "everart", pkg: "@modelcontextprotocol/server-everart", env: { EVERART_API_KEY: "dummy" } },
  { id: "aws-kb", pkg: "@modelcontextprotocol/server-aws-kb-retrieval", env: { AWS_ACCESS_KEY_ID: "dummy", AWS_SECRET_ACCESS_KEY: "dummy", AWS_REGION: "us-east-1" } },
  { id: "notion", pkg: "@notionhq/notion-mcp-server", env: { NOTION_TOKEN: "ntn_dummy" } },
  { id: "playwright", pkg: "@playwright/mcp", args: ["--headless"] },
  { id: "firecrawl", pkg: "firecrawl-mcp", env: { FIRECRAWL_API_KEY: "fc-dummy" } },
];

const wanted = process.env.ONLY ? process.env.ONLY.split(",") : null;
const deps = JSON.parse(readFileSync(join(modules, "package.json"))).dependencies;
let failed = 0;
for (const s of servers) {
  if (wanted && !wanted.includes(s.id)) continue;
  const pj = join(modules, "node_modules", s.pkg, "package.json");
  const meta = JSON.parse(readFileSync(pj));
  const bin = typeof meta.bin === "string" ? meta.bin : Object.values(meta.bin)[0];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(dirname(pj), bin), ...(s.args ?? [])],
    env: { PATH: process.env.PATH, HOME: scratch, ...(s.env ?? {}) },
    stderr: process.env.DEBUG ? "inherit" : "ignore",
  });
  const client = new Client({ name: "legate-collect", version: "1" });
  try {
    await withTimeout(client.connect(transport), 60000);
    const tools = [];
    let cursor;
    do {
      const r = await withTimeout(client.listTools({ cursor }), 60000);
      tools.push(...r.tools);
      cursor = r.nextCursor;
    } while (cursor);
    const file = join(out, s.id + ".json");
    writeFileSync(file, JSON.stringify({ server: s.id, package: `${s.pkg}@${deps[s.pkg]}`, tools }, null, 2) + "\n");
    console.log(`${s.id}: ${tools.length} tools`);
  } catch (e) {
    failed++;
    console.log(`${s.id}: FAILED ${e.message}`);
  } finally {
    await client.close().catch(() => {});
  }
}
process.exit(failed ? 1 : 0);

function withTimeout(p, ms) {
  return Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`no answer in ${ms} ms`)), ms).unref())]);
}
