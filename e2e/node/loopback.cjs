// A "node -r" preload that keeps a server on the loopback interface: server.listen(port) and
// server.listen(port, callback), which bind every interface, become listen(port, "127.0.0.1").
// server-everything's streamableHttp transport calls app.listen(PORT) with no host; the e2e
// tests start it as: PORT=P node -r loopback.cjs …/server-everything/dist/index.js streamableHttp
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  const port = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (port && (args.length === 1 || typeof second === "function")) {
    args.splice(1, 0, "127.0.0.1");
  } else if (first && typeof first === "object" && !Array.isArray(first) && "port" in first && !first.host && !first.path) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
