// Claim and record statement timings at 1k, 10k and 100k due rows, and the claim with a 100k backlog
// behind one saturated (hanging) endpoint against the same claim without it; then 1,000 due rows over
// 200 organizations, and 1,000 due rows beside another organization with 100,000 due over 20 endpoints
// and its per-organization cap in flight. Each measurement runs in a transaction that is rolled back, so
// every repeat sees the same queue. Run it through scripts/bench/outbound_claim.sh (a throwaway
// database). It also runs against the claim's earlier three-argument form (private.webhook_claim(max_rows,
// per_endpoint, lease_seconds)), to compare a checkout of the code before the per-organization cap.
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { machine, summarize } from "./stats.ts";

const median = (xs: number[]) => summarize(xs).p50;

// The request headers an attempt records (send.ts masks the signatures to their first characters).
const SENT_HEADERS = {
  "content-type": "application/json",
  "user-agent": "church-integration-webhooks/1",
  "x-webhook-id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
  "x-webhook-event": "member.created",
  "x-webhook-timestamp": "1795000000",
  "x-webhook-signature": "3f9a1c0d…",
  "webhook-id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
  "webhook-timestamp": "1795000000",
  "webhook-signature": "v1,q0Zb3xYe…",
};

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set; run scripts/bench/outbound_claim.sh");
const REPEATS = Number(Deno.env.get("BENCH_REPEATS") ?? 15);
const sql = createSql(url, { max: 2 });

const [org] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('claim bench') returning id`;
const orgId = org!.id;
const endpoints = await sql<{ id: string }[]>`
  insert into public.webhook_endpoints (organization_id, url, events)
  select ${orgId}, 'https://e' || g || '.example.org/', array['member.created'] from generate_series(1, 5) g
  returning id`;
const [hang, ...healthy] = endpoints.map((e) => e.id);
const [signature] = await sql<{ current: boolean }[]>`
  select to_regprocedure('private.webhook_claim(integer, bigint, integer, integer, integer)') is not null as current`;
const current = signature!.current;
const claimCall = current
  ? "private.webhook_claim(256, 33554432, 16, 64, 40)"
  : "private.webhook_claim(256, 16, 40)";

/** `n` due deliveries spread over `to` endpoints (direct inserts: the outbox is not what is measured). */
async function addDue(n: number, to: string[], organizationId = orgId): Promise<void> {
  await sql`
    with e as (
      insert into public.webhook_events (id, organization_id, type, payload)
      select gen_random_uuid(), ${organizationId}, 'member.created', '{"id":"x","data":{}}'::jsonb
      from generate_series(1, ${n}::int)
      returning id
    ), numbered as (select id, row_number() over () as i from e)
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id)
    select ${organizationId}, numbered.id, (${to}::uuid[])[1 + (numbered.i % ${to.length}::int)] from numbered`;
  await sql`analyze public.webhook_deliveries`;
}

/** Live leases on `limit` of these endpoints' due deliveries, as another dispatcher's sends would hold. */
async function holdLeases(endpointIds: string[], limit: number): Promise<void> {
  await sql.unsafe(
    `insert into private.webhook_leases (delivery_id, endpoint_id, ${current ? "organization_id, " : ""}token,
                                         leased_until)
     select id, endpoint_id, ${current ? "organization_id, " : ""}gen_random_uuid(), now() + interval '1 hour'
     from public.webhook_deliveries where endpoint_id = any($1::uuid[]) limit ${limit}`,
    [endpointIds],
  );
}

async function timeClaim(): Promise<{ claim: number; record: number; rows: number }[]> {
  const out: { claim: number; record: number; rows: number }[] = [];
  for (let i = 0; i < REPEATS; i++) {
    await sql.begin(async (tx) => {
      const t0 = performance.now();
      const rows = await tx.unsafe<{ delivery_id: string; endpoint_id: string; lease_token: string }[]>(
        `select delivery_id, endpoint_id, lease_token from ${claimCall}`,
      );
      const t1 = performance.now();
      const results = rows.map((r) => ({
        ...r,
        outcome: "delivered",
        attempted_at: new Date().toISOString(),
        duration_ms: 1,
        response_status: 200,
        error: null,
        response_excerpt: null,
        retry_after_seconds: null,
        // What an attempt records since Webhook Logs shows headers: the request's, signatures masked.
        request_headers: SENT_HEADERS,
        response_headers: {
          "content-type": "text/plain",
          "content-length": "2",
          date: new Date().toUTCString(),
        },
      }));
      await tx`select private.webhook_record_results(${tx.json(results)})`;
      const t2 = performance.now();
      out.push({ claim: t1 - t0, record: t2 - t1, rows: rows.length });
      throw new Rollback();
    }).catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  }
  return out;
}
class Rollback extends Error {}

/**
 * Shared buffers (8 KiB pages, found in memory or read) one claim touches, the function's own statements
 * included: a measure of its work that the machine's load does not change.
 */
async function claimPages(): Promise<number> {
  let pages = 0;
  await sql.begin(async (tx) => {
    const [row] = await tx.unsafe<{ "QUERY PLAN": { Plan: Record<string, number> }[] }[]>(
      `explain (analyze, buffers, format json) select * from ${claimCall}`,
    );
    const plan = row!["QUERY PLAN"][0]!.Plan;
    pages = (plan["Shared Hit Blocks"] ?? 0) + (plan["Shared Read Blocks"] ?? 0);
    throw new Rollback();
  }).catch((e) => {
    if (!(e instanceof Rollback)) throw e;
  });
  return pages;
}

const table: string[] = [];
async function report(label: string, samples: { claim: number; record: number; rows: number }[]) {
  const c = median(samples.map((s) => s.claim));
  const r = median(samples.map((s) => s.record));
  const pages = await claimPages();
  table.push(
    `| ${label} | ${c.toFixed(2)} ms | ${pages} | ${r.toFixed(2)} ms for ${samples[0]!.rows} rows |`,
  );
  console.log(
    `${label}: claim ${c.toFixed(2)} ms (${pages} pages), record ${r.toFixed(2)} ms for ${
      samples[0]!.rows
    } rows ` +
      `(${(r / Math.max(1, samples[0]!.rows)).toFixed(3)} ms/row)`,
  );
  return c;
}

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(", ");
console.log(`started ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log(
  `${machine()}; ${REPEATS} repeats each, medians; each claim takes up to 256 rows, 16 per endpoint` +
    (current ? ", 64 per organization" : " (the three-argument claim: no organization cap)"),
);
let total = 0;
for (const target of [1_000, 10_000, 100_000]) {
  await addDue(target - total, healthy);
  total = target;
  await report(`${target.toLocaleString("en")} due rows over 4 endpoints`, await timeClaim());
}
// Back to a small queue on the healthy endpoints, then 100k due rows behind the hanging one.
await sql`delete from public.webhook_deliveries where organization_id = ${orgId}`;
await addDue(1_000, healthy);
const without = await report("1,000 due rows, no backlog", await timeClaim());
await addDue(100_000, [hang!]);
// The hanging endpoint is at its cap: 16 of its deliveries are leased (in flight, by any dispatcher).
await holdLeases([hang!], 16);
const withBacklog = await report(
  "1,000 due rows + 100,000 behind a hanging endpoint at its cap",
  await timeClaim(),
);
const ratio = withBacklog / without;

// Many organizations: 1,000 due rows over 200 organizations with one endpoint each (instead of the
// healthy endpoints' 1,000).
await sql`delete from public.webhook_deliveries`;
await sql`delete from private.webhook_leases`;
const small = await sql<{ id: string; organization_id: string }[]>`
  with o as (insert into public.organizations (name) select 'small ' || g from generate_series(1, 200) g returning id)
  insert into public.webhook_endpoints (organization_id, url, events)
  select o.id, 'https://small.example.org/' || o.id, array['member.created'] from o
  returning id, organization_id`;
await sql`
  with e as (
    insert into public.webhook_events (id, organization_id, type, payload)
    select gen_random_uuid(), s.organization_id, 'member.created', '{"id":"x","data":{}}'::jsonb
    from unnest(${small.map((e) => e.organization_id)}::uuid[]) s(organization_id), generate_series(1, 5)
    returning id, organization_id
  )
  insert into public.webhook_deliveries (organization_id, event_id, endpoint_id)
  select e.organization_id, e.id, s.id
  from e join unnest(${small.map((e) => e.id)}::uuid[], ${small.map((e) => e.organization_id)}::uuid[])
    s(id, organization_id) on s.organization_id = e.organization_id`;
await sql`analyze public.webhook_deliveries`;
await report("1,000 due rows over 200 organizations, one endpoint each", await timeClaim());

// A heavy organization beside them: 100,000 due over its 20 endpoints, 64 of them in flight (its cap
// with the current claim; the three-argument claim takes 256 more of its rows).
const [heavy] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('heavy') returning id`;
const heavyEndpoints = (await sql<{ id: string }[]>`
  insert into public.webhook_endpoints (organization_id, url, events)
  select ${
  heavy!.id
}, 'https://heavy' || g || '.example.org/', array['member.created'] from generate_series(1, 20) g
  returning id`).map((e) => e.id);
await addDue(100_000, heavyEndpoints, heavy!.id);
await holdLeases(heavyEndpoints, 64);
await report(
  "the same + 100,000 due in another organization over 20 endpoints, 64 in flight",
  await timeClaim(),
);
console.log(`claim with the backlog / without: ${ratio.toFixed(2)}x`);
// The same as a Markdown table, to paste into BENCHMARKS.md.
console.log("");
console.log(`finished ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log("");
console.log(`| due rows (medians of ${REPEATS}) | claim | pages a claim touches | record |`);
console.log("|---|---|---|---|");
for (const line of table) console.log(line);
console.log(
  `| **claim with the 100k backlog / without** | **${ratio.toFixed(2)}x** ` +
    `(goal <= 1.5x: ${ratio <= 1.5 ? "met" : "NOT met"}) | | |`,
);
await sql.end();
