// Webhook Logs, search by what is inside (GET /webhooks/deliveries?contains=…): the API's exact query
// text (listDeliveriesQuery), run in a transaction as one organization's admin under row-level security,
// with `deliveries` deliveries in that one organization (one endpoint, one delivery per event, so every
// delivery has a body of its own to search: the hardest case for the index) and 9 other organizations
// with 20,000 each whose bodies hold the same addresses (what the organization bound must keep out).
// Bodies are member.created and donation.recorded events of the shape the outbox writes, each with its
// own e-mail address, phone number and (donations) payment id.
// Side by side in the same run: each search with the trigram index and without it (dropped in a
// rolled-back transaction).
//   bash scripts/bench/run.sh logs_search [deliveries=1000000] [runs=20]
// BENCH_WITHOUT_INDEX=0 leaves out the side-by-side runs without the index (each reads every body: about
// 20-35 s a search at 1M).
import postgres from "postgres";
import {
  bodyMatches,
  listDeliveriesQuery,
  searchDeliveries,
} from "../../supabase/functions/webhooks/routes/deliveries.ts";
import { ListDeliveries } from "../../supabase/functions/webhooks/schemas.ts";
import { logsAdmin } from "./logs_listings.ts";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 1_000_000);
const runs = Number(Deno.args[1] ?? 20);
const OTHERS = 9;
const OTHER_EACH = 20_000;
const sql = postgres(url, { max: 1, onnotice: () => {} });
await sql`select cron.unschedule('log-retention')`; // it would remove rows while we measure

// One organization's history: events n = 1..count, 2 seconds apart, newest last; a third donations.
async function load(org: string, endpoint: string, count: number) {
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`; // as a restore: no triggers, no key checks
    await tx`
      insert into public.webhook_events (id, organization_id, type, payload, created_at)
      select id, ${org}::uuid, type,
             jsonb_build_object('id', id, 'type', type, 'created_at', at, 'organization_id', ${org}::uuid,
                                'data', jsonb_build_object('row', r, 'delta', r)),
             at
      from (
        select gen_random_uuid() as id, at,
               case when g % 3 = 0 then 'donation.recorded' else 'member.created' end as type,
               case when g % 3 = 0 then jsonb_build_object(
                 'id', gen_random_uuid(), 'organization_id', ${org}::uuid, 'member_id', gen_random_uuid(),
                 'amount_minor', 100 * (g % 500), 'currency', 'BRL', 'source', 'online',
                 'gateway_payment_id', 'pay_' || substr(md5(g::text), 1, 14), 'donated_at', at,
                 'created_at', at, 'refunded_minor', 0, 'refund_status', 'none')
               else jsonb_build_object(
                 'id', gen_random_uuid(), 'organization_id', ${org}::uuid, 'first_name', 'Maria',
                 'last_name', 'Fernandes ' || g, 'email', 'member' || g || '@example.org',
                 'primary_phone', '+55 11 9' || lpad(g::text, 8, '0'),
                 'primary_phone_normalized', '55119' || lpad(g::text, 8, '0'), 'status', 'active',
                 'source', 'visitor_form', 'created_at', at, 'updated_at', at)
               end as r
        from (select g, now() - make_interval(secs => 2 * (${count} - g)) as at
              from generate_series(1, ${count}) g) s
      ) e`;
    await tx`
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, body_bytes, status,
                                             attempt_count, next_attempt_at, first_attempt_at, last_attempt_at,
                                             last_response_status, delivered_at, created_at)
      select e.organization_id, e.id, ${endpoint}::uuid, e.type, e.body_bytes,
             case when random() < 0.02 then 'permanently_failed' else 'delivered' end, 1, null,
             e.created_at, e.created_at, 200, e.created_at, e.created_at
      from public.webhook_events e where e.organization_id = ${org}::uuid`;
  });
}

const t0 = performance.now();
const orgs = await sql<{ id: string }[]>`
  insert into public.organizations (name) select 'Church ' || g from generate_series(1, ${OTHERS + 1}) g
  returning id`;
const big = orgs[0]!.id;
const endpoints = new Map<string, string>();
for (const o of orgs) {
  const [e] = await sql<{ id: string }[]>`insert into public.webhook_endpoints (organization_id, url, events)
    values (${o.id}, 'https://crm.example.org/hook', ${[
    "member.created",
    "donation.recorded",
  ]}) returning id`;
  endpoints.set(o.id, e!.id);
}
// Loaded without the search's keys (its cron job stopped), which are then written as the batch job
// writes them and indexed once (as `create index` does on a live table): the batch job's own pace is
// scripts/bench/outbox_search_index.ts's.
await sql`select cron.unschedule('webhook-search-index')`;
await sql`drop index private.webhook_event_search_keys_idx`;
await load(big, endpoints.get(big)!, total);
for (const o of orgs.slice(1)) await load(o.id, endpoints.get(o.id)!, OTHER_EACH);
const loadSeconds = (performance.now() - t0) / 1000;
const t1 = performance.now();
await sql`insert into private.webhook_event_search (event_id, organization_id, keys)
  select e.id, e.organization_id,
         private.webhook_body_trigrams(e.organization_id, left(e.payload::text, private.webhook_search_max_chars()))
  from public.webhook_events e`;
await sql`create index webhook_event_search_keys_idx on private.webhook_event_search using gin (keys)`;
await sql`update private.webhook_search_frontier set indexed_until = now()`;
const buildSeconds = (performance.now() - t1) / 1000;
await sql`vacuum analyze public.webhook_events`;
await sql`vacuum analyze public.webhook_deliveries`;
await sql`vacuum analyze private.webhook_event_search`;
const [size] = await sql<{ index: string; events: string; avg: number }[]>`
  select pg_size_pretty(pg_total_relation_size('private.webhook_event_search')) as index,
         pg_size_pretty(pg_total_relation_size('public.webhook_events')) as events,
         (select avg(body_bytes)::int from public.webhook_events) as avg`;

const { claims } = await logsAdmin(sql, big);
// A transaction as the admin (config_api under RLS, as the API runs it); `withoutIndex` first drops the
// search's trigram index as its owner, and the transaction is rolled back.
async function asAdmin(withoutIndex: boolean, fn: (tx: postgres.TransactionSql) => Promise<void>) {
  try {
    await sql.begin(async (tx) => {
      if (withoutIndex) await tx`drop index private.webhook_event_search_keys_idx`;
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'config_api', true)`;
      await fn(tx);
      throw new Error("rollback");
    });
  } catch (e) {
    if ((e as Error).message !== "rollback") throw e;
  }
}
const n = Math.floor(total / 2) + 1; // an event in the middle of the history
const searches: [string, Record<string, string>][] = [
  ["an e-mail address (1 body)", { contains: `member${n % 3 === 0 ? n + 1 : n}@example.org` }],
  ["a payment id (1 body)", { contains: `pay_${await md5(3 * Math.floor(n / 3))}` }],
  ["a phone number, digits only (1 body)", {
    contains: `55119${String(n % 3 === 0 ? n + 1 : n).padStart(8, "0")}`,
  }],
  ["a surname and number prefix (~111 bodies)", { contains: `Fernandes ${String(n).slice(0, 4)}` }],
  ["an address nobody has (0 bodies)", { contains: "nobody@nowhere.example" }],
  ["a word in every body (example.org)", { contains: "example.org" }],
  ["an e-mail address, with status=delivered", {
    contains: `member${n % 3 === 0 ? n + 1 : n}@example.org`,
    status: "delivered",
  }],
];

async function md5(g: number) {
  const [r] = await sql<{ h: string }[]>`select substr(md5(${String(g)}), 1, 14) as h`;
  return r!.h;
}

const SCANS =
  /(Seq Scan|Index Scan(?: Backward)? using \S+|Index Only Scan(?: Backward)? using \S+|Bitmap \w+ Scan(?: on \S+)?|Sort|Nested Loop|Hash Join)/g;

// Both steps the API takes, timed together: the matching bodies through the index, then the page.
async function time(filter: Record<string, string>, withoutIndex: boolean) {
  const q = ListDeliveries.parse({ ...filter, limit: 50 });
  const samples: number[] = [];
  let rows = 0;
  let plan = "";
  let found = "";
  await asAdmin(withoutIndex, async (tx) => {
    let text = "";
    let args: unknown[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const t = performance.now();
      rows = (await searchDeliveries(tx as never, q, null)).length;
      if (i >= 2) samples.push(performance.now() - t);
      if (withoutIndex && i >= 4) break; // a few runs suffice to show a sequential scan's cost
    }
    // Which way the page was found: among the newest rows, or through the matching bodies.
    const matches = await bodyMatches(tx as never, q.contains!);
    found = matches === "scan" ? "over 5,000" : `${matches.length}`;
    ({ text, args } = listDeliveriesQuery(q, null, matches));
    const lines = await tx.unsafe<{ "QUERY PLAN": string }[]>(`explain (costs off) ${text}`, args as never[]);
    plan = [...new Set(lines.map((l) => l["QUERY PLAN"]).join("\n").match(SCANS) ?? [])].join(", ");
  });
  return { ...summarize(samples), rows, plan, found };
}

console.log(`Webhook Logs content search (GET /webhooks/deliveries?contains=…), admin under RLS`);
console.log(`machine: ${machine()}`);
console.log(
  `data: ${total} deliveries in the measured organization (one per event, bodies ${size!.avg} bytes on ` +
    `average), ${OTHERS} others with ${OTHER_EACH} each; loaded in ${
      loadSeconds.toFixed(0)
    } s; trigram index ` +
    `built in ${buildSeconds.toFixed(0)} s, ${size!.index} (events table with its indexes: ${size!.events})`,
);
console.log(`| search | bodies matched | rows | p50 | p90 | max | listing plan | without the index: p50 |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const [name, filter] of searches) {
  const w = await time(filter, false);
  const wo = Deno.env.get("BENCH_WITHOUT_INDEX") === "0" ? { p50: NaN } : await time(filter, true);
  console.log(
    `| ${name} | ${w.found} | ${w.rows} | ${fmt(w.p50)} | ${fmt(w.p90)} | ${fmt(w.max)} | ${w.plan} | ${
      fmt(wo.p50)
    } |`,
  );
}
await sql.end();
