// Claim and record statement timings at 1k, 10k and 100k due rows, and the claim with a 100k backlog
// behind one saturated (hanging) endpoint against the same claim without it. Each measurement runs in a
// transaction that is rolled back, so every repeat sees the same queue. Run it through
// scripts/bench/outbound_claim.sh (a throwaway database).
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

/** `n` due deliveries spread over `to` endpoints (direct inserts: the outbox is not what is measured). */
async function addDue(n: number, to: string[]): Promise<void> {
  await sql`
    with e as (
      insert into public.webhook_events (id, organization_id, type, payload)
      select gen_random_uuid(), ${orgId}, 'member.created', '{"id":"x","data":{}}'::jsonb
      from generate_series(1, ${n}::int)
      returning id
    ), numbered as (select id, row_number() over () as i from e)
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id)
    select ${orgId}, numbered.id, (${to}::uuid[])[1 + (numbered.i % ${to.length}::int)] from numbered`;
  await sql`analyze public.webhook_deliveries`;
}

async function timeClaim(): Promise<{ claim: number; record: number; rows: number }[]> {
  const out: { claim: number; record: number; rows: number }[] = [];
  for (let i = 0; i < REPEATS; i++) {
    await sql.begin(async (tx) => {
      const t0 = performance.now();
      const rows = await tx<{ delivery_id: string; endpoint_id: string; lease_token: string }[]>`
        select delivery_id, endpoint_id, lease_token from private.webhook_claim(256, 16, 40)`;
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

const table: string[] = [];
function report(label: string, samples: { claim: number; record: number; rows: number }[]) {
  const c = median(samples.map((s) => s.claim));
  const r = median(samples.map((s) => s.record));
  table.push(`| ${label} | ${c.toFixed(2)} ms | ${r.toFixed(2)} ms for ${samples[0]!.rows} rows |`);
  console.log(
    `${label}: claim ${c.toFixed(2)} ms, record ${r.toFixed(2)} ms for ${samples[0]!.rows} rows ` +
      `(${(r / Math.max(1, samples[0]!.rows)).toFixed(3)} ms/row)`,
  );
  return c;
}

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(", ");
console.log(`started ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log(
  `${machine()}; ${REPEATS} repeats each, medians; each claim takes up to 256 rows, 16 per endpoint`,
);
let total = 0;
for (const target of [1_000, 10_000, 100_000]) {
  await addDue(target - total, healthy);
  total = target;
  report(`${target.toLocaleString("en")} due rows over 4 endpoints`, await timeClaim());
}
// Back to a small queue on the healthy endpoints, then 100k due rows behind the hanging one.
await sql`delete from public.webhook_deliveries where organization_id = ${orgId}`;
await addDue(1_000, healthy);
const without = report("1,000 due rows, no backlog", await timeClaim());
await addDue(100_000, [hang!]);
// The hanging endpoint is at its cap: 16 of its deliveries are leased (in flight, by any dispatcher).
await sql`insert into private.webhook_leases (delivery_id, endpoint_id, token, leased_until)
          select id, endpoint_id, gen_random_uuid(), now() + interval '1 hour'
          from public.webhook_deliveries where endpoint_id = ${hang!} limit 16`;
const withBacklog = report(
  "1,000 due rows + 100,000 behind a hanging endpoint at its cap",
  await timeClaim(),
);
const ratio = withBacklog / without;
console.log(`claim with the backlog / without: ${ratio.toFixed(2)}x`);
// The same as a Markdown table, to paste into BENCHMARKS.md.
console.log("");
console.log(`finished ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log("");
console.log(`| due rows (medians of ${REPEATS}) | claim | record |`);
console.log("|---|---|---|");
for (const line of table) console.log(line);
console.log(
  `| **claim with the 100k backlog / without** | **${ratio.toFixed(2)}x** ` +
    `(goal <= 1.5x: ${ratio <= 1.5 ? "met" : "NOT met"}) | |`,
);
await sql.end();
