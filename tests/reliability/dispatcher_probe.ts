// A dispatcher in its own process that reports its memory: runs the delivery engine for PROBE_ROUNDS
// rounds over the endpoints in PROBE_ENDPOINTS (making their retrying deliveries due again between
// rounds, as time would), sampling RSS and heap every 50 ms. With PROBE_SETTLE_SECONDS, then more rounds
// while any of their deliveries is still retrying, for at most that long. Prints one JSON line at the end.
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { DeliveryEngine } from "../../supabase/functions/webhook-dispatcher/engine.ts";

const sql = createSql(Deno.env.get("TEST_DATABASE_URL")!, { max: 4 });
const endpoints = (Deno.env.get("PROBE_ENDPOINTS") ?? "").split(",");
const rounds = Number(Deno.env.get("PROBE_ROUNDS") ?? 4);
const engine = new DeliveryEngine(sql, {
  allowPrivateTargets: true,
  timeoutMs: Number(Deno.env.get("PROBE_TIMEOUT_MS") ?? 1500),
  maxInFlight: 64,
  perEndpoint: 32,
  log: () => {},
});
const mib = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
let maxRss = 0;
let maxHeap = 0;
const sample = () => {
  const m = Deno.memoryUsage();
  maxRss = Math.max(maxRss, m.rss);
  maxHeap = Math.max(maxHeap, m.heapUsed);
};
const timer = setInterval(sample, 50);
const perRound: { rss_mib: number; heap_mib: number; claimed: number }[] = [];
for (let r = 0; r < rounds; r++) {
  const stats = await engine.run({ stopWhenIdle: true });
  sample();
  const m = Deno.memoryUsage();
  perRound.push({ rss_mib: mib(m.rss), heap_mib: mib(m.heapUsed), claimed: stats.claimed });
  await sql`update public.webhook_deliveries set next_attempt_at = now() - interval '1 second'
            where endpoint_id = any(${endpoints}::uuid[]) and status = 'retrying'`;
}
const settleUntil = Date.now() + Number(Deno.env.get("PROBE_SETTLE_SECONDS") ?? 0) * 1000;
let settleRounds = 0;
while (Date.now() < settleUntil) {
  const [left] = await sql<{ n: number }[]>`select count(*)::int as n from public.webhook_deliveries
            where endpoint_id = any(${endpoints}::uuid[]) and status = 'retrying'`;
  if (!left?.n) break;
  await sql`update public.webhook_deliveries set next_attempt_at = now() - interval '1 second'
            where endpoint_id = any(${endpoints}::uuid[]) and status = 'retrying'`;
  await engine.run({ stopWhenIdle: true });
  settleRounds++;
}
clearInterval(timer);
console.log(JSON.stringify({
  rounds: perRound,
  settle_rounds: settleRounds,
  max_rss_mib: mib(maxRss),
  max_heap_mib: mib(maxHeap),
}));
await sql.end();
