// Webhook Logs and retention at the target scale: 10M deliveries across 100 organizations (100,000
// each), with every attempt and event that history implies.
//   bash scripts/bench/run.sh logs_scale [deliveries=10000000] [runs=30] [retention_days=27]
// 1. loads 30 days of history (scripts/bench/delivery_history.ts) and reports the tables' sizes with
//    their indexes, per million deliveries;
// 2. times every Webhook Logs listing as one organization's admin under RLS, first page and pages
//    10,000 and 50,000 rows deep (scripts/bench/logs_listings.ts), and the first pages without the log
//    index, side by side;
// 3. sets every organization's retention to `retention_days` (27 of the 30 days loaded: the oldest
//    tenth goes, as a daily run would find it) and runs the scheduled retention to the end while the
//    dispatcher's database work runs in a loop (scripts/bench/retention_under_load.ts).
import postgres from "postgres";
import { loadHistory } from "./delivery_history.ts";
import { timeListings, timeWithoutLogIndex } from "./logs_listings.ts";
import { printRetention, retentionUnderLoad } from "./retention_under_load.ts";
import { machine } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 10_000_000);
const runs = Number(Deno.args[1] ?? 30);
const days = Number(Deno.args[2] ?? 27);
const sql = postgres(url, { max: 1, onnotice: () => {} });
const worker = postgres(url, { max: 1, onnotice: () => {} });

const stamp = (what: string) =>
  console.log(
    `[${new Date().toISOString().slice(11, 19)} UTC, load average ${
      Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ")
    }] ${what}`,
  );

console.log(`Webhook Logs and retention at scale, ${machine()}`);
// The benchmark runs retention itself; the every-10-minutes job would otherwise join in.
await sql`select cron.unschedule('log-retention')`;
stamp(`loading ${total} deliveries with their events and attempts`);
const { big, n, loadSeconds, bigEvents, ORGS, ENDPOINTS } = await loadHistory(sql, total, { attempts: true });
stamp(
  `loaded ${n} deliveries in ${loadSeconds.toFixed(0)} s: ${ORGS} organizations x ${ENDPOINTS} endpoints, ` +
    `the measured one holds ${bigEvents * ENDPOINTS}`,
);

const TABLES = [
  "webhook_deliveries",
  "webhook_delivery_attempts",
  "webhook_events",
  "webhook_endpoint_health",
  "webhook_endpoint_health_buckets",
];
async function sizes(title: string) {
  const rows = await sql<
    { t: string; rows: number; heap: number; toast: number; idx: number; total: number }[]
  >`
    select t, (select reltuples::bigint from pg_class where oid = ('public.' || t)::regclass)::float8 as rows,
           pg_relation_size(('public.' || t)::regclass)::float8 as heap,
           (pg_total_relation_size(('public.' || t)::regclass) - pg_relation_size(('public.' || t)::regclass)
            - pg_indexes_size(('public.' || t)::regclass))::float8 as toast,
           pg_indexes_size(('public.' || t)::regclass)::float8 as idx,
           pg_total_relation_size(('public.' || t)::regclass)::float8 as total
    from unnest(${TABLES}::text[]) t`;
  const { deliveries } = (await sql<{ deliveries: number }[]>`
    select count(*)::float8 as deliveries from public.webhook_deliveries`)[0]!;
  const mb = (b: number) => (b / 1048576).toFixed(0);
  console.log(`${title} (${deliveries} deliveries)`);
  console.log("| table | rows | table | TOAST | indexes | total | per million deliveries |");
  console.log("|---|---|---|---|---|---|---|");
  let sum = 0;
  for (const r of rows) {
    sum += r.total;
    console.log(
      `| ${r.t} | ${r.rows.toFixed(0)} | ${mb(r.heap)} MB | ${mb(r.toast)} MB | ${mb(r.idx)} MB | ${
        mb(r.total)
      } MB | ` +
        `${mb(r.total / (deliveries / 1e6))} MB |`,
    );
  }
  console.log(
    `| all five | | | | | ${mb(sum)} MB | **${mb(sum / (deliveries / 1e6))} MB** |`,
  );
  const idx = await sql<{ name: string; bytes: number }[]>`
    select indexrelid::regclass::text as name, pg_relation_size(indexrelid)::float8 as bytes
    from pg_index where indrelid = 'public.webhook_deliveries'::regclass order by 2 desc`;
  console.log(`webhook_deliveries' indexes: ${idx.map((i) => `${i.name} ${mb(i.bytes)} MB`).join(", ")}`);
  return sum / (deliveries / 1e6);
}
const perMillion = await sizes( // bytes per million deliveries
  "Sizes after loading and vacuum analyze",
);

stamp(`Webhook Logs listings, ${runs} runs each after 3 warm-up runs`);
await timeListings(sql, big, runs);
stamp("the first pages without the log index (dropped in a transaction that is rolled back)");
await timeWithoutLogIndex(sql, big, Math.min(runs, 10));

stamp(`retention set to ${days} days; the scheduled procedure runs to the end beside the dispatcher loop`);
const r = await retentionUnderLoad(sql, worker, big, days);
printRetention(r);
stamp("retention done; vacuum analyze");
await sql`vacuum analyze`;
await sizes(`Sizes after retention and vacuum (${days}-day retention)`);
console.log(
  `Steady state with R days of retention at X deliveries a day: R * X * ${
    (perMillion / 1e6 / 1024).toFixed(2)
  } kB ` +
    `(${
      (perMillion / 1024 ** 3).toFixed(2)
    } GB per million deliveries kept, with this history's attempts and events)`,
);
stamp("done");
await sql.end();
await worker.end();
