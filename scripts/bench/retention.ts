// Retention at scale: what removing old delivery history costs per million deliveries, and what it does
// to deliveries going on at the same time.
//   bash scripts/bench/run.sh retention [deliveries=1000000]
// Loads 30 days of history (one attempt per finished delivery), sets every organization's retention
// to 1 day, and runs the scheduled procedure (private.retention_run, batches of 1,000 events) to the
// end. Meanwhile a second connection runs the dispatcher's database work in a loop: 20 new members
// (80 deliveries through the outbox), claim them (private.webhook_claim) and record them delivered
// (private.webhook_record_results). Its rate is measured before and during retention, side by side.
import postgres from "postgres";
import { dispatcherRound, loadHistory } from "./delivery_history.ts";
import { machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 1_000_000);
const sql = postgres(url, { max: 1, onnotice: () => {} });
const worker = postgres(url, { max: 1, onnotice: () => {} });

const { big, n, bytes, loadSeconds } = await loadHistory(sql, total);
await sql`
  insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
                                                response_status, duration_ms)
  select organization_id, id, 1, created_at, 200, 120 from public.webhook_deliveries where status <> 'pending'`;
await sql`update public.webhook_deliveries set last_attempt_at = created_at where status <> 'pending'`;
await sql`vacuum analyze`;
const size = async () =>
  (await sql<{ mb: number }[]>`
    select round((pg_total_relation_size('public.webhook_deliveries') + pg_total_relation_size('public.webhook_events')
           + pg_total_relation_size('public.webhook_delivery_attempts')) / 1048576.0) as mb`)[0]!.mb;
const before = await size();

const dispatchRound = () => dispatcherRound(worker, big);

async function roundsFor(ms: number): Promise<number[]> {
  const samples: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) samples.push(await dispatchRound());
  return samples;
}

for (let i = 0; i < 5; i++) await dispatchRound(); // warm up
const quiet = await roundsFor(10_000);

await sql`insert into public.organization_log_retention (organization_id, webhook_log_days)
          select id, 1 from public.organizations`;
const { removable } = (await sql<{ removable: number }[]>`
  select count(*)::int as removable from public.webhook_deliveries
  where created_at < now() - interval '1 day' and status <> all (private.webhook_open_states())`)[0]!;
let busy: number[] = [];
let running = true;
const during = (async () => {
  while (running) busy.push(await dispatchRound());
})();
const t0 = performance.now();
await sql`call private.retention_run(1000, interval '1 hour')`;
const seconds = (performance.now() - t0) / 1000;
running = false;
await during;
busy = busy.slice(1); // the round already running when retention started

const [left] = await sql<{ deliveries: number; attempts: number; events: number }[]>`
  select (select count(*)::int from public.webhook_deliveries) as deliveries,
         (select count(*)::int from public.webhook_delivery_attempts) as attempts,
         (select count(*)::int from public.webhook_events) as events`;
await sql`vacuum analyze`;
const after = await size();

const q = summarize(quiet);
const b = summarize(busy);
const rate = (s: number[]) => (s.length * 80) / (s.reduce((a, x) => a + x, 0) / 1000);
console.log(`Retention, ${machine()}`);
console.log(
  `data: ${n} deliveries (${bytes} with indexes) + one attempt each, loaded in ${loadSeconds.toFixed(0)} s`,
);
console.log(
  `removed ${removable} deliveries (and their events and attempts) in ${seconds.toFixed(1)} s: ` +
    `${(seconds / (removable / 1e6)).toFixed(1)} s per million deliveries removed`,
);
console.log(
  `left: ${left!.deliveries} deliveries, ${left!.attempts} attempts, ${left!.events} events ` +
    `(including those the concurrent loop made)`,
);
console.log(
  `size of the three tables: ${before} MB before, ${after} MB after vacuum (space is reused, not returned)`,
);
console.log("| dispatcher database work (80 deliveries per round) | rounds | p50 | p90 | deliveries/s |");
console.log("|---|---|---|---|---|");
console.log(
  `| alone | ${q.n} | ${q.p50.toFixed(1)} ms | ${q.p90.toFixed(1)} ms | ${rate(quiet).toFixed(0)} |`,
);
console.log(
  `| while retention runs | ${b.n} | ${b.p50.toFixed(1)} ms | ${b.p90.toFixed(1)} ms | ${
    rate(busy).toFixed(0)
  } |`,
);
console.log(`throughput during retention: ${(100 * rate(busy) / rate(quiet)).toFixed(0)}% of alone`);
await sql.end();
await worker.end();
