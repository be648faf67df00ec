// Webhook Logs at scale: how long GET /webhooks/deliveries' queries take for one organization's admin
// under row-level security, with a million deliveries of history across 100 organizations. Runs the
// exact query text the API builds (listDeliveriesQuery), inside the same kind of transaction
// (`authenticated` with the admin's JWT claims), for the first page and a page 50,000 rows deep.
// Side by side, the default listing and the status filter with the Webhook Logs indexes dropped
// (in a transaction that is rolled back), which is what the table had before.
//   bash scripts/bench/run.sh webhook_logs [deliveries=1000000] [runs=30]
import postgres from "postgres";
import { listDeliveriesQuery } from "../../supabase/functions/webhooks/routes/deliveries.ts";
import { ListDeliveries } from "../../supabase/functions/webhooks/schemas.ts";
import { dispatcherRound, loadHistory } from "./delivery_history.ts";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const total = Number(Deno.args[0] ?? 1_000_000);
const runs = Number(Deno.args[1] ?? 30);
const sql = postgres(url, { max: 1, onnotice: () => {} });

const { big, n, bytes, loadSeconds, bigEvents, ORGS, ENDPOINTS } = await loadHistory(sql, total);

const { user_id } = (await sql<{ user_id: string }[]>`
  with u as (insert into auth.users (id, email) values (gen_random_uuid(), 'bench-admin@example.org') returning id)
  insert into public.profiles (user_id, organization_id, role) select u.id, ${big}::uuid, 'admin' from u
  returning user_id::text`)[0]!;
const claims = JSON.stringify({ sub: user_id, role: "authenticated", organization_id: big });
const { endpoint } = (await sql<{ endpoint: string }[]>`
  select min(id::text) as endpoint from public.webhook_endpoints where organization_id = ${big}::uuid`)[0]!;

type Tx = postgres.TransactionSql;
async function asAdmin<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
  return await sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
    return await fn(tx);
  }) as T;
}

// The cursor the API would hand out after `depth` rows of this listing (its last row's keyset).
async function cursorAt(filter: Record<string, string>, depth: number): Promise<[string, string] | null> {
  if (depth === 0) return null;
  const q = ListDeliveries.parse({ ...filter, limit: 1 });
  const { text, args } = listDeliveriesQuery(q, null);
  const paged = text.replace(/limit \$\d+$/, `offset ${depth - 1} limit 1`);
  const [row] = await asAdmin((tx) =>
    tx.unsafe<{ cursor_at: string; id: string }[]>(paged, args.slice(0, -1) as never[])
  );
  return row ? [row.cursor_at, row.id] : null;
}

async function time(filter: Record<string, string>, depth: number) {
  const cursor = await cursorAt(filter, depth);
  if (depth > 0 && !cursor) return null;
  const q = ListDeliveries.parse({ ...filter, limit: 50 });
  const { text, args } = listDeliveriesQuery(q, cursor);
  const samples: number[] = [];
  let rows = 0;
  await asAdmin(async (tx) => {
    for (let i = 0; i < runs + 3; i++) {
      const t = performance.now();
      rows = (await tx.unsafe(text, args as never[])).length;
      if (i >= 3) samples.push(performance.now() - t); // the first runs warm the cache
    }
  });
  return { ...summarize(samples), rows };
}

const now = Date.now();
const listings: [string, Record<string, string>][] = [
  ["default listing", {}],
  ["status=permanently_failed", { status: "permanently_failed" }],
  ["status=delivered", { status: "delivered" }],
  ["event_type=donation.recorded", { event_type: "donation.recorded" }],
  ["endpoint_id=<one of 4>", { endpoint_id: endpoint }],
  ["since/until: a 10-day window", {
    since: new Date(now - 20 * 86400_000).toISOString(),
    until: new Date(now - 10 * 86400_000).toISOString(),
  }],
];

console.log(
  `Webhook Logs (GET /webhooks/deliveries), admin under RLS, ${runs} runs each after 3 warm-up runs`,
);
console.log(`machine: ${machine()}`);
console.log(
  `data: ${n} deliveries (${bytes} with indexes), ${ORGS} organizations x ${ENDPOINTS} endpoints; the measured ` +
    `organization holds ${bigEvents * ENDPOINTS}; loaded in ${loadSeconds.toFixed(0)} s`,
);
console.log("| listing | page | rows | p50 | p90 | max |");
console.log("|---|---|---|---|---|---|");
for (const [name, filter] of listings) {
  for (const depth of [0, 10_000, 50_000]) {
    const s = await time(filter, depth);
    const page = depth === 0 ? "first" : `${depth.toLocaleString("en")} deep`;
    if (!s) {
      console.log(`| ${name} | ${page} | (fewer than ${depth} rows) | | | |`);
      continue;
    }
    console.log(`| ${name} | ${page} | ${s.rows} | ${fmt(s.p50)} | ${fmt(s.p90)} | ${fmt(s.max)} |`);
  }
}

// Side by side: the same first pages without the Webhook Logs indexes (as before issue 16).
await sql.begin(async (tx) => {
  await tx`drop index public.webhook_deliveries_log_idx`;
  await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'authenticated', true)`;
  for (const [name, filter] of listings.slice(0, 2)) {
    const q = ListDeliveries.parse({ ...filter, limit: 50 });
    const { text, args } = listDeliveriesQuery(q, null);
    const samples: number[] = [];
    for (let i = 0; i < Math.min(runs, 10) + 1; i++) {
      const t = performance.now();
      await tx.unsafe(text, args as never[]);
      if (i >= 1) samples.push(performance.now() - t);
    }
    const s = summarize(samples);
    console.log(
      `| ${name}, WITHOUT the log index | first | 51 | ${fmt(s.p50)} | ${fmt(s.p90)} | ${fmt(s.max)} |`,
    );
  }
  throw new Error("rollback");
}).catch((e) => {
  if (e.message !== "rollback") throw e;
});

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
