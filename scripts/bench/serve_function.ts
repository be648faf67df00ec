// Serves one function on loopback exactly as its index.ts deploys it (the app's fetch handler straight
// on Deno.serve, no dev-server router in front), and prints its URL. Used by the benchmarks.
//   deno run -A scripts/bench/serve_function.ts checkout-webhook
import { runtimeDeps } from "../../supabase/functions/_shared/app.ts";

const name = Deno.args[0];
if (!name || !/^[a-z-]+$/.test(name)) throw new Error("usage: serve_function.ts <function-name>");
const { createApp } = await import(`../../supabase/functions/${name}/app.ts`);
const deps = runtimeDeps();
const app = createApp(deps);
const controller = new AbortController();
const server = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  signal: controller.signal,
  onListen: ({ port }) => console.log(`serving http://127.0.0.1:${port}/${name}`),
}, app.fetch);
Deno.addSignalListener("SIGINT", () => controller.abort());
await server.finished;
await deps.sql.end({ timeout: 5 });
