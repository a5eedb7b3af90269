// The TypeScript SDK client's own OAuth (an OAuthClientProvider) against
// Legate, given only its URL: the first connect discovers the
// authorization server, registers, and asks for the authorization URL to
// be opened (printed on stderr: the test's user agent logs in and
// consents); the code arrives at this script's callback on 127.0.0.1;
// finishAuth exchanges it; the second connect lists the tools and calls
// one. Usage: node oauth-sdk.mjs URL CALLBACK_PORT TOOL; prints
// {"tools": [...], "call": {...}, "refresh": true|false, "access_token": "..."}
// on stdout.
import http from "node:http";
import { load } from "./clients/common.mjs";

const [url, port, tool] = process.argv.slice(2);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { UnauthorizedError } = await load("@modelcontextprotocol/sdk/client/auth.js");

const redirectUrl = `http://127.0.0.1:${port}/callback`;
const saved = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: "SDK OAuth test", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation() { return saved.client; },
  saveClientInformation(c) { saved.client = c; },
  tokens() { return saved.tokens; },
  saveTokens(t) { saved.tokens = t; },
  redirectToAuthorization(u) { process.stderr.write(`authorize at ${u.href}\n`); },
  saveCodeVerifier(v) { saved.verifier = v; },
  codeVerifier() { return saved.verifier; },
};

const code = new Promise((resolve, reject) => {
  const srv = http.createServer((req, res) => {
    const got = new URL(req.url, redirectUrl).searchParams.get("code");
    res.end(got ? "signed in" : "no code");
    srv.close();
    got ? resolve(got) : reject(new Error(`the callback got no code: ${req.url}`));
  });
  srv.listen(Number(port), "127.0.0.1");
});

const connect = async () => {
  const client = new Client({ name: "sdk-oauth", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
};
let client;
try {
  ({ client } = await connect());
  throw new Error("connected without logging in");
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await transport.finishAuth(await code);
  ({ client } = await connect());
}
const tools = (await client.listTools()).tools.map((t) => t.name);
const call = await client.callTool({ name: tool, arguments: { method: "GET", url: "http://192.0.2.1/" } });
await client.close();
process.stdout.write(JSON.stringify({ tools, call, refresh: Boolean(saved.tokens?.refresh_token), access_token: saved.tokens?.access_token }) + "\n");
