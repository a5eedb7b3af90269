// An OAuth-protected MCP server made of the TypeScript SDK's own
// authorization support: its auth router (mcpAuthRouter: RFC 8414
// metadata, RFC 7591 registration, authorize with PKCE, token), the
// examples' in-memory demo provider (it approves every consent at once
// and checks the resource indicator, RFC 8707), requireBearerAuth (401
// with RFC 9728 resource_metadata) in front of a Streamable HTTP server
// at /mcp, whose sessions each belong to the token that opened them, with
// one tool "whoami" answering the OAuth client and resource the call's
// token was issued for (never the token).
// Usage: node oauth-upstream.mjs; prints "LISTENING http://127.0.0.1:PORT/mcp",
// then "ISSUED TOKEN" for each access token it issues (so that a test can
// look for them where they must not be).
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { load } from "./clients/common.mjs";

const { default: express } = await load("express");
const { z } = await load("zod");
const { McpServer } = await load("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = await load("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } = await load("@modelcontextprotocol/sdk/server/auth/router.js");
const { requireBearerAuth } = await load("@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js");
const { DemoInMemoryAuthProvider } = await load("@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js");

const app = express();
const server = createServer(app);
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const base = `http://127.0.0.1:${server.address().port}`;
const mcpUrl = new URL(base + "/mcp");

const provider = new DemoInMemoryAuthProvider((resource) => resource?.toString() === mcpUrl.href);
const exchange = provider.exchangeAuthorizationCode.bind(provider);
provider.exchangeAuthorizationCode = async (...args) => {
  const tokens = await exchange(...args);
  process.stdout.write(`ISSUED ${tokens.access_token}\n`);
  return tokens;
};
app.use(express.json());
app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"] }));
const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });

let calls = 0;
const sessions = new Map(); // Mcp-Session-Id -> { transport, token }
app.all("/mcp", bearer, async (req, res) => {
  const id = req.headers["mcp-session-id"];
  const token = req.auth.token;
  let entry = id && sessions.get(id);
  if (id && !entry) {
    res.status(404).json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
    return;
  }
  if (entry && entry.token !== token) { // a session is its user's alone
    res.status(403).json({ jsonrpc: "2.0", error: { code: -32001, message: "Session belongs to another token" }, id: null });
    return;
  }
  if (!entry) {
    const mcp = new McpServer({ name: "oauth-upstream", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "The OAuth client and resource of the caller's token", inputSchema: { note: z.string().optional() }, annotations: { readOnlyHint: true } },
      async (_args, extra) => {
        calls++;
        return { content: [{ type: "text", text: JSON.stringify({ client_id: extra.authInfo?.clientId, resource: String(extra.authInfo?.resource ?? ""), calls }) }] };
      });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(), enableJsonResponse: true,
      onsessioninitialized: (sid) => sessions.set(sid, { transport, token }),
    });
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
    await mcp.connect(transport);
    entry = { transport, token };
  }
  await entry.transport.handleRequest(req, res, req.body);
});

process.stdout.write(`LISTENING ${mcpUrl.href}\n`);
