// An OAuth-protected MCP server made of the TypeScript SDK's own
// authorization support: its auth router (mcpAuthRouter: RFC 8414
// metadata, RFC 7591 registration, authorize with PKCE, token), the
// examples' in-memory demo provider (it approves every consent at once
// and checks the resource indicator, RFC 8707), requireBearerAuth (401
// with RFC 9728 resource_metadata) in front of a Streamable HTTP server
// at /mcp, stateless, with one tool "whoami" answering the OAuth client
// the call's token was issued to (never the token).
// Usage: node oauth-upstream.mjs; prints "LISTENING http://127.0.0.1:PORT/mcp".
import { createServer } from "node:http";
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
app.use(express.json());
app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"] }));
const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });

let calls = 0;
app.all("/mcp", bearer, async (req, res) => {
  const mcp = new McpServer({ name: "oauth-upstream", version: "1.0.0" });
  mcp.registerTool("whoami", { description: "The OAuth client and resource of the caller's token", inputSchema: { note: z.string().optional() } },
    async (_args, extra) => {
      calls++;
      return { content: [{ type: "text", text: JSON.stringify({ client_id: extra.authInfo?.clientId, resource: String(extra.authInfo?.resource ?? ""), calls }) }] };
    });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => { transport.close(); mcp.close(); });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, req.body);
});

process.stdout.write(`LISTENING ${mcpUrl.href}\n`);
