// Webhook Logs at scale: how long GET /webhooks/deliveries' queries take for one organization's admin
// under row-level security, with a million deliveries of history across 100 organizations
// (scripts/bench/logs_listings.ts: the API's exact query text, first page and deep pages). Side by side,
// the default listing and the status filter without the Webhook Logs index, and what the index costs
// the dispatcher's writes. scripts/bench/logs_scale.ts runs the listings at 10M with the table sizes and
// retention.
//   bash scripts/bench/run.sh webhook_logs [deliveries=1000000] [runs=30]
import postgres from "postgres";
import { dispatcherRound, loadHistory } from "./delivery_history.ts";
import { timeListings, timeWithoutLogIndex } from "./logs_listings.ts";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 1_000_000);
const runs = Number(Deno.args[1] ?? 30);
const sql = postgres(url, { max: 1, onnotice: () => {} });

await sql`select cron.unschedule('log-retention')`; // it would remove the oldest rows while we measure
const { big, n, bytes, loadSeconds, bigEvents, ORGS, ENDPOINTS } = await loadHistory(sql, total);

console.log(
  `Webhook Logs (GET /webhooks/deliveries), admin under RLS, ${runs} runs each after 3 warm-up runs`,
);
console.log(`machine: ${machine()}`);
console.log(
  `data: ${n} deliveries (${bytes} with indexes), ${ORGS} organizations x ${ENDPOINTS} endpoints; the measured ` +
    `organization holds ${bigEvents * ENDPOINTS}; loaded in ${loadSeconds.toFixed(0)} s`,
);
await timeListings(sql, big, runs);
await timeWithoutLogIndex(sql, big, Math.min(runs, 10));

// What the log index costs writers: the dispatcher's database work (outbox, claim, results) for 80
// deliveries a round, with the index and without it, alternating in blocks of 20 rounds.
const rounds = async (n: number) => {
  const s: number[] = [];
  for (let i = 0; i < n; i++) s.push(await dispatcherRound(sql, big));
  return s;
};
await rounds(10);
const withIdx: number[] = [];
const withoutIdx: number[] = [];
for (let block = 0; block < 5; block++) {
  withIdx.push(...await rounds(20));
  await sql`drop index public.webhook_deliveries_log_idx`;
  withoutIdx.push(...await rounds(20));
  await sql`create index webhook_deliveries_log_idx
            on public.webhook_deliveries (organization_id, created_at, id, status, event_type)`;
}
const w = summarize(withIdx);
const wo = summarize(withoutIdx);
console.log("| dispatcher database work, 80 deliveries per round | rounds | p50 | p90 |");
console.log("|---|---|---|---|");
console.log(`| with webhook_deliveries_log_idx | ${w.n} | ${fmt(w.p50)} | ${fmt(w.p90)} |`);
console.log(`| without it | ${wo.n} | ${fmt(wo.p50)} | ${fmt(wo.p90)} |`);
console.log(`write cost of the index: p50 ${(100 * (w.p50 / wo.p50 - 1)).toFixed(0)}%`);
await sql.end();
