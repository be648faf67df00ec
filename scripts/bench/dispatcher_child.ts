// Our dispatcher alone in its own process, as the dev server runs it (startLocalDispatcher with its
// defaults, a pool of DB_POOL_MAX's default 10), so a benchmark can read its CPU time and peak RSS
// from /proc apart from everything else. Prints "ready" once listening; SIGTERM stops it cleanly.
//   BENCH_DATABASE_URL=postgresql://... deno run -A scripts/bench/dispatcher_child.ts
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { startLocalDispatcher } from "../../supabase/functions/webhook-dispatcher/local_loop.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set");
const sql = createSql(url, { max: 10 });
await sql`select 1`;
const dispatcher = startLocalDispatcher(sql, {
  allowPrivateTargets: true,
  log: (e) => {
    if (e.level === "error") console.error(JSON.stringify(e));
  },
});
const stopped = Promise.withResolvers<void>();
Deno.addSignalListener("SIGTERM", () => stopped.resolve());
console.log("ready");
await stopped.promise;
await dispatcher.stop();
await sql.end({ timeout: 5 });
