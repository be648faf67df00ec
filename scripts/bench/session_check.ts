// The session check every policy helper makes (private.live_user_id(): the token's session still in
// auth.sessions), on the RLS benchmark it matters most to: Webhook Logs at the target scale.
//   bash scripts/bench/run.sh session_check [deliveries=10000000] [runs=30] [rounds=10]
// 1. loads the history scripts/bench/logs_scale.ts loads (scripts/bench/delivery_history.ts), without
//    the retention part;
// 2. times every Webhook Logs listing as one organization's admin, first page and pages 10,000 and
//    50,000 rows deep, as the configuration API runs them (scripts/bench/logs_listings.ts);
// 3. the default listing with and without the session check, alternating, side by side.
import postgres from "postgres";
import { loadHistory } from "./delivery_history.ts";
import { timeListings, timeSessionCheck } from "./logs_listings.ts";
import { machine } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 10_000_000);
const runs = Number(Deno.args[1] ?? 30);
const rounds = Number(Deno.args[2] ?? 10);
const sql = postgres(url, { max: 1, onnotice: () => {} });

const stamp = (what: string) =>
  console.log(
    `[${new Date().toISOString().slice(11, 19)} UTC, load average ${
      Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ")
    }] ${what}`,
  );

console.log(`Sessions in every policy: Webhook Logs at scale, ${machine()}`);
await sql`select cron.unschedule('log-retention')`;
stamp(`loading ${total} deliveries with their events and attempts`);
const { big, n, loadSeconds } = await loadHistory(sql, total, { attempts: true });
stamp(`loaded ${n} deliveries in ${loadSeconds.toFixed(0)} s`);
await sql`vacuum analyze`;
stamp(`every listing as the measured organization's admin (${runs} runs after 3 warm-up)`);
await timeListings(sql, big, runs);
stamp(
  `the default listing with and without the session check (${rounds} rounds of ${runs} runs, alternating)`,
);
await timeSessionCheck(sql, big, rounds, runs);
stamp("done");
await sql.end();
