// Our dispatcher alone in its own process, as the dev server runs it (startLocalDispatcher with its
// defaults, a pool of DB_POOL_MAX's default 10), so a benchmark can read its CPU time and peak RSS
// from /proc apart from everything else. Prints "ready" once listening; SIGTERM stops it cleanly.
//   BENCH_DATABASE_URL=postgresql://... deno run -A scripts/bench/dispatcher_child.ts
// BENCH_MEMLOG=file appends "ms rss heapTotal heapUsed external" (bytes) every 100 ms, to see whether
// peak RSS is heap garbage, live heap, or memory outside the V8 heap. BENCH_HEAP_PROFILE=file.heapprofile
// records a sampling heap profile of everything allocated, collected or not, from start to SIGTERM
// (summarize with scripts/bench/heapprofile.ts).
// BENCH_PER_ORGANIZATION sets the dispatcher's per-organization cap (the fairness benchmark turns it
// off with a number larger than anything in flight).
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { Session } from "node:inspector";
import { startLocalDispatcher } from "../../supabase/functions/webhook-dispatcher/local_loop.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set");
const sql = createSql(url, { max: 10 });
await sql`select 1`;
const perOrganization = Deno.env.get("BENCH_PER_ORGANIZATION");
const dispatcher = startLocalDispatcher(sql, {
  allowPrivateTargets: true,
  ...(perOrganization ? { perOrganization: Number(perOrganization) } : {}),
  log: (e) => {
    if (e.level === "error") console.error(JSON.stringify(e));
  },
});
const stopped = Promise.withResolvers<void>();
Deno.addSignalListener("SIGTERM", () => stopped.resolve());
const heapProfile = Deno.env.get("BENCH_HEAP_PROFILE");
const inspector = heapProfile ? new Session() : undefined;
const post = (method: string, params: object = {}) =>
  new Promise<unknown>((resolve, reject) =>
    inspector!.post(
      method,
      params,
      (err: Error | null, result: unknown) => err ? reject(err) : resolve(result),
    )
  );
if (inspector) {
  inspector.connect();
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
}
const memlog = Deno.env.get("BENCH_MEMLOG");
const memTimer = memlog
  ? setInterval(() => {
    const m = Deno.memoryUsage();
    Deno.writeTextFileSync(memlog, `${Date.now()} ${m.rss} ${m.heapTotal} ${m.heapUsed} ${m.external}\n`, {
      append: true,
    });
  }, 100)
  : undefined;
console.log("ready");
await stopped.promise;
clearInterval(memTimer);
if (inspector) {
  const { profile } = await post("HeapProfiler.stopSampling") as { profile: unknown };
  Deno.writeTextFileSync(heapProfile!, JSON.stringify(profile));
}
await dispatcher.stop();
await sql.end({ timeout: 5 });
