// Times every Webhook Logs listing (GET /webhooks/deliveries) the way the API runs it: the exact query
// text listDeliveriesQuery builds, in a transaction as one organization's admin under row-level security
// (as config_api, with a token naming a live session), for the first page and pages 10,000 and 50,000
// rows deep (by the cursor the API would hand out); and the same listings with and without the session
// check every policy helper makes, side by side.
import type postgres from "postgres";
import { listDeliveriesQuery } from "../../supabase/functions/webhooks/routes/deliveries.ts";
import { ListDeliveries } from "../../supabase/functions/webhooks/schemas.ts";
import { SPARSE } from "./delivery_history.ts";
import { fmt, summarize } from "./stats.ts";

type Tx = postgres.TransactionSql;
type Filter = Record<string, string>;

export async function logsAdmin(sql: postgres.Sql, organizationId: string) {
  const { user_id, session_id } = (await sql<{ user_id: string; session_id: string }[]>`
    with u as (insert into auth.users (id, email) values (gen_random_uuid(), 'bench-admin@example.org') returning id),
    p as (insert into public.profiles (user_id, organization_id, role)
          select u.id, ${organizationId}::uuid, 'admin' from u returning user_id),
    s as (insert into auth.sessions (id, user_id, created_at, updated_at, aal)
          select gen_random_uuid(), u.id, now(), now(), 'aal1' from u returning id, user_id)
    select s.user_id::text as user_id, s.id::text as session_id from s, p`)[0]!;
  // Other people's sessions, so the session lookup is an index probe among many, as in production.
  await sql`insert into auth.users (id, email) select gen_random_uuid(), 'bench-' || g || '@example.org'
            from generate_series(1, 20000) g`;
  await sql`insert into auth.sessions (id, user_id, created_at, updated_at, aal)
            select gen_random_uuid(), u.id, now(), now(), 'aal1' from auth.users u, generate_series(1, 3)
            where u.email like 'bench-%'`;
  await sql`analyze auth.sessions`;
  const claims = JSON.stringify({
    sub: user_id,
    role: "authenticated",
    organization_id: organizationId,
    session_id,
  });
  const asAdmin = async <T>(fn: (tx: Tx) => Promise<T>): Promise<T> =>
    await sql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'config_api', true)`;
      return await fn(tx);
    }) as T;
  return { claims, asAdmin };
}

/** The listings the API offers, as query-string filters. */
export async function listings(sql: postgres.Sql, organizationId: string): Promise<[string, Filter][]> {
  const [ids] = await sql<{ endpoint: string; sparse: string | null }[]>`
    select min(id::text) filter (where url <> ${SPARSE}) as endpoint,
           min(id::text) filter (where url = ${SPARSE}) as sparse
    from public.webhook_endpoints where organization_id = ${organizationId}::uuid`;
  const { endpoint, sparse } = ids!;
  const now = Date.now();
  return [
    ["default listing", {}],
    ["status=permanently_failed", { status: "permanently_failed" }],
    ["status=delivered", { status: "delivered" }],
    ["event_type=donation.recorded", { event_type: "donation.recorded" }],
    ["endpoint_id=<one of 4>", { endpoint_id: endpoint }],
    ...(sparse ? [["endpoint_id=<a rare one: 0.5% of the organization's>", { endpoint_id: sparse }]] : []),
    ["since/until: a 10-day window", {
      since: new Date(now - 20 * 86400_000).toISOString(),
      until: new Date(now - 10 * 86400_000).toISOString(),
    }],
  ] as [string, Filter][];
}

// The scan nodes of a plan, e.g. "Index Scan Backward using webhook_deliveries_log_idx".
const SCANS =
  /(Seq Scan|Parallel Seq Scan|Index Scan(?: Backward)? using \S+|Index Only Scan(?: Backward)? using \S+|Bitmap \w+ Scan|Sort)/g;

/**
 * Prints one table row per listing and depth: rows returned, p50/p90/max over `runs` runs (after 3
 * warm-up runs in the same transaction) and the plan's scan nodes.
 */
export async function timeListings(
  sql: postgres.Sql,
  organizationId: string,
  runs: number,
  depths = [0, 10_000, 50_000],
) {
  const { asAdmin } = await logsAdmin(sql, organizationId);

  // The cursor the API would hand out after `depth` rows of this listing (its last row's keyset).
  async function cursorAt(filter: Filter, depth: number): Promise<[string, string] | null> {
    if (depth === 0) return null;
    const q = ListDeliveries.parse({ ...filter, limit: 1 });
    const { text, args } = listDeliveriesQuery(q, null);
    const paged = text.replace(/limit \$\d+$/, `offset ${depth - 1} limit 1`);
    const [row] = await asAdmin((tx) =>
      tx.unsafe<{ cursor_at: string; id: string }[]>(paged, args.slice(0, -1) as never[])
    );
    return row ? [row.cursor_at, row.id] : null;
  }

  async function time(filter: Filter, depth: number) {
    const cursor = await cursorAt(filter, depth);
    if (depth > 0 && !cursor) return null;
    const q = ListDeliveries.parse({ ...filter, limit: 50 });
    const { text, args } = listDeliveriesQuery(q, cursor);
    const samples: number[] = [];
    let rows = 0;
    const plan = await asAdmin(async (tx) => {
      for (let i = 0; i < runs + 3; i++) {
        const t = performance.now();
        rows = (await tx.unsafe(text, args as never[])).length;
        if (i >= 3) samples.push(performance.now() - t); // the first runs warm the cache
      }
      // The plan of the same prepared statement with the same parameters.
      const lines = await tx.unsafe<{ "QUERY PLAN": string }[]>(
        `explain (costs off) ${text}`,
        args as never[],
      );
      const plan = lines.map((l) => l["QUERY PLAN"]).join("\n");
      // Conditions checked on the table's rows rather than in the index (the RLS one is expected).
      const filters = [...plan.matchAll(/Filter: (.*)/g)].map((m) => m[1]!.replace(/::\w+/g, ""));
      return [...new Set(plan.match(SCANS) ?? []), ...filters.map((f) => `filter ${f}`)].join(", ");
    });
    return { ...summarize(samples), rows, plan };
  }

  console.log("| listing | page | rows | p50 | p90 | max | plan |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [name, filter] of await listings(sql, organizationId)) {
    for (const depth of depths) {
      const s = await time(filter, depth);
      const page = depth === 0 ? "first" : `${depth.toLocaleString("en")} deep`;
      if (!s) {
        console.log(`| ${name} | ${page} | (fewer than ${depth} rows) | | | | |`);
        continue;
      }
      console.log(
        `| ${name} | ${page} | ${s.rows} | ${fmt(s.p50)} | ${fmt(s.p90)} | ${fmt(s.max)} | ${s.plan} |`,
      );
    }
  }
}

/**
 * Side by side: the first pages of the default and status listings without webhook_deliveries_log_idx
 * (dropped in a transaction that is rolled back), which is what the table had before that index existed.
 */
export async function timeWithoutLogIndex(sql: postgres.Sql, organizationId: string, runs: number) {
  const { claims } = await logsAdmin(sql, organizationId);
  const filters = (await listings(sql, organizationId)).slice(0, 2);
  await sql.begin(async (tx) => {
    await tx`drop index public.webhook_deliveries_log_idx`;
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'config_api', true)`;
    for (const [name, filter] of filters) {
      const q = ListDeliveries.parse({ ...filter, limit: 50 });
      const { text, args } = listDeliveriesQuery(q, null);
      const samples: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        const t = performance.now();
        await tx.unsafe(text, args as never[]);
        if (i >= 1) samples.push(performance.now() - t);
      }
      const s = summarize(samples);
      console.log(
        `| ${name}, WITHOUT the log index | first | 51 | ${fmt(s.p50)} | ${fmt(s.p90)} | ${fmt(s.max)} | |`,
      );
    }
    throw new Error("rollback");
  }).catch((e) => {
    if (e.message !== "rollback") throw e;
  });
}

/**
 * Side by side, alternating: the default listing's first page and a page 50,000 rows deep as they run
 * (every policy helper asks private.live_user_id(), whose session lookup is the check), and with that
 * helper put back to what it was before sessions were checked (the token's user, whatever its session;
 * replaced in a transaction that is rolled back). `rounds` rounds of `runs` runs each, after 3 warm-up
 * runs per round; medians over all of a side's runs, and their ratio.
 */
export async function timeSessionCheck(
  sql: postgres.Sql,
  organizationId: string,
  rounds: number,
  runs: number,
) {
  const { claims, asAdmin } = await logsAdmin(sql, organizationId);
  const withoutCheck = `create or replace function private.live_user_id() returns uuid
    language sql stable security definer set search_path = '' as $$ select auth.uid() $$`;
  const filter = (await listings(sql, organizationId))[0]![1];
  console.log("| listing | page | with the session check, p50 | without, p50 | ratio | p90 with / without |");
  console.log("|---|---|---|---|---|---|");
  for (const depth of [0, 50_000]) {
    const q = ListDeliveries.parse({ ...filter, limit: 50 });
    let cursor: [string, string] | null = null;
    if (depth > 0) {
      const first = listDeliveriesQuery(ListDeliveries.parse({ ...filter, limit: 1 }), null);
      const paged = first.text.replace(/limit \$\d+$/, `offset ${depth - 1} limit 1`);
      const [row] = await asAdmin((tx) =>
        tx.unsafe<{ cursor_at: string; id: string }[]>(paged, first.args.slice(0, -1) as never[])
      );
      if (!row) continue;
      cursor = [row.cursor_at, row.id];
    }
    const { text, args } = listDeliveriesQuery(q, cursor);
    const time = async (tx: Tx, into: number[]) => {
      for (let i = 0; i < runs + 3; i++) {
        const t = performance.now();
        const rows = await tx.unsafe(text, args as never[]);
        if (i >= 3) into.push(performance.now() - t);
        if (rows.length < 50) throw new Error(`expected a full page, got ${rows.length} rows`);
      }
    };
    const checked: number[] = [];
    const unchecked: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const sides = [
        () => asAdmin((tx) => time(tx, checked)),
        () =>
          sql.begin(async (tx) => {
            await tx.unsafe(withoutCheck);
            await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'config_api', true)`;
            await time(tx, unchecked);
            throw new Error("rollback");
          }).catch((e) => {
            if (e.message !== "rollback") throw e;
          }),
      ];
      // Alternating which goes first, so neither always meets the warmer cache.
      for (const side of r % 2 ? sides : sides.reverse()) await side();
    }
    const a = summarize(checked);
    const b = summarize(unchecked);
    console.log(
      `| default listing | ${depth === 0 ? "first" : `${depth.toLocaleString("en")} deep`} | ${
        fmt(a.p50)
      } | ` +
        `${fmt(b.p50)} | ${(a.p50 / b.p50).toFixed(2)} | ${fmt(a.p90)} / ${fmt(b.p90)} |`,
    );
  }
}
