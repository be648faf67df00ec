// One function's index.ts run as Supabase's Edge Runtime runs it, on loopback, for the tests and
// benchmarks of the hosted path (pg_cron -> pg_net -> function):
//   - EdgeRuntime.waitUntil keeps a request's background work going after its 202;
//   - Deno.serve listens on 127.0.0.1 (EDGE_PORT, default a free port), whatever index.ts asks for, as
//     the runtime too decides where a function listens; the first line printed is
//     `serving http://127.0.0.1:<port>/<name>`; requests to /functions/v1/<name>/... reach the function
//     as /<name>/..., as through the platform's gateway, so http://127.0.0.1:<port> can stand for the
//     project URL that pg_net posts to;
//   - SIGTERM or SIGINT is the runtime's shutdown notice: `beforeunload` is dispatched on globalThis, the
//     background work gets EDGE_SHUTDOWN_MS (default 4000) to end, and the process exits: 0 when it ended
//     in time, 1 when it was cut off (then `cut off` is logged with how many tasks were still running).
// Environment as deployed: SUPABASE_DB_URL, WEBHOOK_DISPATCH_SECRET, ...
//   deno run -A scripts/edge-runtime.ts webhook-dispatcher
const name = Deno.args[0];
if (!name || !/^[a-z-]+$/.test(name)) {
  console.error("usage: deno run -A scripts/edge-runtime.ts <function-name>");
  Deno.exit(2);
}

const background = new Set<Promise<unknown>>();
(globalThis as { EdgeRuntime?: unknown }).EdgeRuntime = {
  waitUntil(work: Promise<unknown>) {
    const task = work.catch(() => {}).finally(() => background.delete(task));
    background.add(task);
  },
};

let server: Deno.HttpServer | undefined;
const port = Number(Deno.env.get("EDGE_PORT") ?? 0);
const serve = Deno.serve;
const listening = Promise.withResolvers<void>();
// index.ts calls Deno.serve(handler): the address is ours to choose, as it is the runtime's.
(Deno as { serve: unknown }).serve = (...args: unknown[]) => {
  const handle = args.find((a) => typeof a === "function") as Deno.ServeHandler;
  const handler: Deno.ServeHandler = (req, info) => {
    const url = new URL(req.url);
    if (!url.pathname.startsWith("/functions/v1/")) return handle(req, info);
    url.pathname = url.pathname.slice("/functions/v1".length);
    return handle(new Request(url, req), info);
  };
  server = serve({
    hostname: "127.0.0.1",
    port,
    onListen: ({ port }) => {
      console.log(`serving http://127.0.0.1:${port}/${name}`);
      listening.resolve();
    },
  }, handler);
  return server;
};

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  const started = Date.now();
  const graceMs = Number(Deno.env.get("EDGE_SHUTDOWN_MS") ?? 4000);
  console.error(JSON.stringify({ level: "info", msg: "shutdown notice", signal, running: background.size }));
  globalThis.dispatchEvent(new Event("beforeunload"));
  const ended = await Promise.race([
    Promise.allSettled([...background]).then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), graceMs)),
  ]);
  if (!ended) console.error(JSON.stringify({ level: "error", msg: "cut off", running: background.size }));
  console.error(JSON.stringify({ level: "info", msg: "stopped", ms: Date.now() - started }));
  Deno.exit(ended ? 0 : 1);
}
Deno.addSignalListener("SIGTERM", () => void shutdown("SIGTERM"));
Deno.addSignalListener("SIGINT", () => void shutdown("SIGINT"));

await import(new URL(`../supabase/functions/${name}/index.ts`, import.meta.url).href);
await listening.promise;
