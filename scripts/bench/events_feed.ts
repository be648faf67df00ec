// The events feed at scale: how long GET /webhooks/events' queries take for one organization's admin
// under row-level security (the API's own code: feedHorizon + feedPage, as config_api with a token naming
// a live session), listing 50 events, first page and 50,000 deep, newest first and forward from a
// cursor, with and without an event-type filter. The table holds `events` events of 10 organizations,
// half of them the measured one's, written 5,000 per transaction (as bulk inserts write them) over 25 days.
//   bash scripts/bench/run.sh events_feed [events=1000000] [runs=30]
import postgres from "postgres";
import {
  feedHorizon,
  feedPage,
  feedPageQuery,
  type Position,
} from "../../supabase/functions/webhooks/feed.ts";
import { logsAdmin } from "./logs_listings.ts";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 1_000_000);
const runs = Number(Deno.args[1] ?? 30);
const sql = postgres(url, { max: 1, onnotice: () => {} });

await sql`select cron.unschedule('log-retention')`;
const orgs = (await sql<{ id: string }[]>`
  insert into public.organizations (name) select 'Bench ' || g from generate_series(1, 10) g returning id::text`)
  .map((r) => r.id);
const big = orgs[0]!;
// The content search's trigram index is no part of the feed and would slow the load tenfold.
await sql`drop index if exists public.webhook_events_org_body_trgm_idx`;
await sql.unsafe(`
  create procedure pg_temp.load(total integer, orgs uuid[]) language plpgsql as $$
  declare
    b integer := 0;
  begin
    while b * 5000 < total loop
      insert into public.webhook_events (id, organization_id, type, payload, created_at)
      select x.id, x.org, x.type,
             jsonb_build_object('id', x.id, 'type', x.type, 'created_at', x.at, 'organization_id', x.org,
               'data', jsonb_build_object('row', jsonb_build_object('id', gen_random_uuid(), 'amount_minor', g,
                 'currency', 'USD', 'first_name', 'Member ' || g), 'delta', '{}'::jsonb)),
             x.at
      from generate_series(b * 5000 + 1, least(total, (b + 1) * 5000)) g
      cross join lateral (
        select gen_random_uuid() as id,
               case when g % 2 = 0 then orgs[1] else orgs[2 + g % 9] end as org,
               case when g % 200 = 0 then 'workflow.completed' when g % 5 < 2 then 'member.created'
                    when g % 5 < 4 then 'donation.recorded' else 'attendance.marked' end as type,
               now() - interval '25 days' * (1 - g::float8 / total) as at
      ) x;
      commit;
      b := b + 1;
    end loop;
  end $$`);
const t0 = performance.now();
await sql.unsafe(`call pg_temp.load(${total}, $1::uuid[])`, [orgs]);
await sql`vacuum analyze public.webhook_events`;
const loadSeconds = (performance.now() - t0) / 1000;
const [size] = await sql<{ total: string }[]>`
  select pg_size_pretty(pg_total_relation_size('public.webhook_events')) as total`;

const { asAdmin } = await logsAdmin(sql, big);
console.log(
  `Events feed (GET /webhooks/events), admin under RLS, limit 50, ${runs} runs each after 3 warm-up runs`,
);
console.log(`machine: ${machine()}`);
console.log(
  `data: ${total} events (${size!.total} with indexes), 10 organizations, the measured one ${total / 2}; ` +
    `loaded in ${loadSeconds.toFixed(0)} s`,
);

/** The position `depth` events from the newest (or, forward, from the horizon back), by the feed's order. */
async function positionAt(depth: number, type?: string): Promise<Position> {
  // A type rarer than the depth: halfway into it.
  const [count] = await sql<{ n: number }[]>`
    select count(*)::int as n from public.webhook_events
    where organization_id = ${big} and (${type ?? null}::text is null or type = ${type ?? null})`;
  const [r] = await sql<{ xid: string; id: string }[]>`
    select xid::text as xid, id::text as id from public.webhook_events
    where organization_id = ${big} and (${type ?? null}::text is null or type = ${type ?? null})
    order by xid desc, id desc offset ${Math.min(depth, Math.floor(count!.n / 2))} limit 1`;
  return { xid: r!.xid, id: r!.id, at: Math.floor(Date.now() / 1000) };
}

const SCANS =
  /(Seq Scan|Index Scan(?: Backward)? using \S+|Index Only Scan(?: Backward)? using \S+|Bitmap \w+ Scan|Sort)/g;
// The round trip alone, for scale: a loaded machine adds to every statement alike.
{
  const t: number[] = [];
  await asAdmin(async (tx) => {
    for (let i = 0; i < runs + 3; i++) {
      const s = performance.now();
      await tx`select 1`;
      if (i >= 3) t.push(performance.now() - s);
    }
  });
  console.log(`select 1: p50 ${fmt(summarize(t).p50)}`);
}
console.log("| listing | depth | rows | p50 | p90 | max | in PostgreSQL, p50 | plan |");
console.log("|---|---|---|---|---|---|---|---|");
for (const type of [undefined, "donation.recorded", "workflow.completed"]) {
  for (
    const [mode, depth] of [["newest first", 0], ["newest first", 50_000], [
      "forward (after)",
      50_000,
    ]] as const
  ) {
    const at = depth ? await positionAt(depth, type) : undefined;
    const q = {
      limit: 50,
      types: type ? [type] : undefined,
      ...(mode === "forward (after)" ? { after: at } : at ? { before: at } : {}),
    };
    const samples: number[] = [];
    const server: number[] = [];
    let rows = 0;
    let plan = "";
    await asAdmin(async (tx) => {
      for (let i = 0; i < runs + 3; i++) {
        const s = performance.now();
        const h = await feedHorizon(tx);
        rows = (await feedPage(tx, big, h.horizon, q)).length;
        if (i >= 3) samples.push(performance.now() - s);
      }
      const h = await feedHorizon(tx);
      const { text, args } = feedPageQuery(big, h.horizon, q);
      const lines = await tx.unsafe<{ "QUERY PLAN": string }[]>(`explain ${text}`, args as never[]);
      plan = [...new Set(lines.map((l) => l["QUERY PLAN"]).join("\n").match(SCANS) ?? [])].join(", ");
      // What the database itself spends (planning and execution of both statements), without the
      // round trips a loaded machine stretches.
      for (let i = 0; i < runs; i++) {
        let ms = 0;
        for (
          const [t, a] of [[
            "select pg_snapshot_xmin(pg_current_snapshot()), private.webhook_feed_retention_days()",
            [],
          ], [text, args]] as const
        ) {
          const [r] = await tx.unsafe<
            { "QUERY PLAN": [{ "Planning Time": number; "Execution Time": number }] }[]
          >(
            `explain (analyze, format json) ${t}`,
            a as never[],
          );
          ms += r!["QUERY PLAN"][0]["Planning Time"] + r!["QUERY PLAN"][0]["Execution Time"];
        }
        server.push(ms);
      }
    });
    const s = summarize(samples);
    console.log(
      `| ${type ? `event_type=${type}` : "all types"}, ${mode} | ${depth} | ${rows} | ${fmt(s.p50)} | ${
        fmt(s.p90)
      } | ${fmt(s.max)} | ${fmt(summarize(server).p50)} | ${plan} |`,
    );
  }
}
await sql.end();
