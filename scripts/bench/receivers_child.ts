// The benchmark's receivers, in their own process as real receivers would be: 20 endpoints on
// loopback ports plus a control port. Endpoint 0 can be told to hang (never answer until released).
//   GET  /ports                 -> [port, ...]
//   POST /reset?hang=0|1        clears counters, sets endpoint 0's hanging
//   GET  /stats                 -> {"counts":[...]}
//   GET  /receipts              -> {"<batch tag>": [receivedAt ms, ...], ...} of healthy endpoints
//   POST /release               lets hanging requests answer
import http from "node:http";

const ENDPOINTS = 20;
let hang = false;
let release = Promise.withResolvers<void>();
let counts = new Array<number>(ENDPOINTS).fill(0);
let receipts = new Map<string, number[]>();
const tagPattern = /"last_name": "([^"]*)"/;

const ports: number[] = [];
/** One received delivery: counted, its batch tag's receive time kept. */
function receive(i: number, text: string) {
  const receivedAt = Date.now();
  counts[i]!++;
  const tag = tagPattern.exec(text)?.[1] ?? "";
  let list = receipts.get(tag);
  if (!list) receipts.set(tag, list = []);
  list.push(receivedAt);
}
// --node-http: the endpoints on node:http instead of Deno.serve. Deno.serve (Deno 2.9.5) answers a POST
// whose body is about 400 bytes or more with "connection: close", so every delivery there costs both
// sides a new TCP connection; node:http keeps connections alive, as most real receivers do.
const nodeHttp = Deno.args.includes("--node-http");
for (let i = 0; i < ENDPOINTS; i++) {
  if (nodeHttp) {
    const server = http.createServer((req, res) => {
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => text += chunk);
      req.on("end", async () => {
        if (i === 0 && hang) {
          await release.promise;
          res.end("late");
          return;
        }
        receive(i, text);
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    ports.push((server.address() as { port: number }).port);
    continue;
  }
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const text = await req.text();
    if (i === 0 && hang) {
      await release.promise;
      return new Response("late");
    }
    receive(i, text);
    return new Response("ok");
  });
  ports.push(server.addr.port);
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
