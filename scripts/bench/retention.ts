// Retention at scale: what removing old delivery history costs per million deliveries, and what it does
// to deliveries going on at the same time.
//   bash scripts/bench/run.sh retention [deliveries=1000000]
// Loads 30 days of history with every attempt (scripts/bench/delivery_history.ts), sets every
// organization's retention to 1 day, and runs the scheduled procedure to the end while the dispatcher's
// database work runs in a loop (scripts/bench/retention_under_load.ts). scripts/bench/logs_scale.ts
// does the same at 10M with a 27-day retention (a tenth of the history removed).
import postgres from "postgres";
import { loadHistory } from "./delivery_history.ts";
import { printRetention, retentionUnderLoad } from "./retention_under_load.ts";
import { machine } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 1_000_000);
const sql = postgres(url, { max: 1, onnotice: () => {} });
const worker = postgres(url, { max: 1, onnotice: () => {} });

// The benchmark runs retention itself; the every-10-minutes job would otherwise join in.
await sql`select cron.unschedule('log-retention')`;
const { big, n, bytes, loadSeconds } = await loadHistory(sql, total, { attempts: true });
const size = async () =>
  (await sql<{ mb: number }[]>`
    select round((pg_total_relation_size('public.webhook_deliveries') + pg_total_relation_size('public.webhook_events')
           + pg_total_relation_size('public.webhook_delivery_attempts')) / 1048576.0) as mb`)[0]!.mb;
const before = await size();
const r = await retentionUnderLoad(sql, worker, big, 1);
await sql`vacuum analyze`;
const after = await size();

console.log(`Retention, ${machine()}`);
console.log(
  `data: ${n} deliveries (${bytes} with indexes) with their attempts and events, loaded in ${
    loadSeconds.toFixed(0)
  } s`,
);
printRetention(r);
console.log(
  `size of the three tables: ${before} MB before, ${after} MB after vacuum (space is reused, not returned)`,
);
await sql.end();
await worker.end();
