// The benchmark's receivers, in their own process as real receivers would be: 20 endpoints on
// loopback ports plus a control port. Endpoint 0 can be told to hang (never answer until released).
//   GET  /ports                 -> [port, ...]
//   POST /reset?hang=0|1        clears counters, sets endpoint 0's hanging
//   GET  /stats                 -> {"counts":[...]}
//   GET  /receipts              -> {"<batch tag>": [receivedAt ms, ...], ...} of healthy endpoints
//   POST /release               lets hanging requests answer
import { Buffer } from "node:buffer";
import { createServer } from "node:http";

const ENDPOINTS = 20;
let hang = false;
let release = Promise.withResolvers<void>();
let counts = new Array<number>(ENDPOINTS).fill(0);
let receipts = new Map<string, number[]>();
const tagPattern = /"last_name": "([^"]*)"/;

// node:http, not Deno.serve: Deno.serve answers a request with a body of more than about 100 bytes with
// `connection: close` (Deno 2.9), so every delivery would open a new connection, which receivers in
// the field do not make a client do.
const ports: number[] = [];
for (let i = 0; i < ENDPOINTS; i++) {
  const server = createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", async () => {
      if (i === 0 && hang) await release.promise;
      else {
        const receivedAt = Date.now();
        counts[i]!++;
        const tag = tagPattern.exec(Buffer.concat(chunks).toString())?.[1] ?? "";
        let list = receipts.get(tag);
        if (!list) receipts.set(tag, list = []);
        list.push(receivedAt);
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(i === 0 && hang ? "late" : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  ports.push((server.address() as { port: number }).port);
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`control ${port}`),
}, (req) => {
  const url = new URL(req.url);
  switch (`${req.method} ${url.pathname}`) {
    case "GET /ports":
      return Response.json(ports);
    case "POST /reset":
      hang = url.searchParams.get("hang") === "1";
      counts = new Array<number>(ENDPOINTS).fill(0);
      receipts = new Map();
      return Response.json({ ok: true });
    case "GET /stats":
      return Response.json({ counts });
    case "GET /receipts":
      return Response.json(Object.fromEntries(receipts));
    case "POST /release":
      release.resolve();
      release = Promise.withResolvers<void>();
      return Response.json({ ok: true });
    default:
      return new Response("no", { status: 404 });
  }
});
