// Delivery history for the Webhook Logs and retention benchmarks: 100 organizations with 4 endpoints
// each, events over the last 30 days, each delivered to every endpoint. One organization holds a tenth
// of all deliveries (100,000 of 1M, as each of 100 organizations would with 10M), so a page 50,000 rows
// deep exists; the others share the rest. The newest minutes are still pending, 2% permanently failed.
import type postgres from "postgres";

export const TYPES = [
  "member.created",
  "member.lost",
  "donation.recorded",
  "attendance.marked",
  "workflow.completed",
];

export async function loadHistory(sql: postgres.Sql, total: number) {
  const ORGS = 100;
  const ENDPOINTS = 4;
  const bigEvents = Math.round(total / 10 / ENDPOINTS);
  const otherEvents = Math.round((total - bigEvents * ENDPOINTS) / (ORGS - 1) / ENDPOINTS);

  const t0 = performance.now();
  const { big } = (await sql<{ big: string }[]>`
    with o as (
      insert into public.organizations (name) select 'Church ' || g from generate_series(1, ${ORGS}) g returning id
    ) select min(id::text) as big from o`)[0]!;
  await sql`
    insert into public.webhook_endpoints (organization_id, url, events)
    select o.id, 'https://e' || e || '.example.org/hook', ${TYPES}::text[]
    from public.organizations o, generate_series(1, ${ENDPOINTS}) e`;
  const orgs = await sql<{ id: string }[]>`select id::text from public.organizations`;
  for (const { id } of orgs) {
    const events = id === big ? bigEvents : otherEvents;
    // 30 days of history; the newest minutes still pending, 2% permanently failed, the rest delivered.
    await sql`
      with ev as (
        insert into public.webhook_events (organization_id, type, payload, created_at)
        select ${id}::uuid, (${TYPES}::text[])[1 + (random() * 4)::int], '{"data":{}}'::jsonb,
               now() - random() * interval '30 days'
        from generate_series(1, ${events})
        returning id, organization_id, type, created_at
      )
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, status,
                                             next_attempt_at, attempt_count, created_at)
      select ev.organization_id, ev.id, ep.id, ev.type,
             case when ev.created_at > now() - interval '10 minutes' then 'pending'
                  when random() < 0.02 then 'permanently_failed' else 'delivered' end,
             case when ev.created_at > now() - interval '10 minutes' then now() end, 1, ev.created_at
      from ev join public.webhook_endpoints ep on ep.organization_id = ev.organization_id`;
  }
  await sql`vacuum analyze public.webhook_deliveries`;
  const { n, bytes } = (await sql<{ n: number; bytes: string }[]>`
    select count(*)::int as n, pg_size_pretty(pg_total_relation_size('public.webhook_deliveries')) as bytes
    from public.webhook_deliveries`)[0]!;
  const loadSeconds = (performance.now() - t0) / 1000;
  return { big, n, bytes, loadSeconds, bigEvents, ORGS, ENDPOINTS };
}

/**
 * One round of the dispatcher's database work for 80 new deliveries (20 members of an organization with
 * 4 endpoints: the outbox fans out, the claim leases them, the results mark them delivered with one
 * attempt each). Returns its duration in ms.
 */
export async function dispatcherRound(sql: postgres.Sql, organizationId: string): Promise<number> {
  const t = performance.now();
  await sql`insert into public.members (organization_id, first_name)
            select ${organizationId}::uuid, 'bench' from generate_series(1, 20)`;
  const claimed = await sql<{ delivery_id: string; endpoint_id: string; lease_token: string }[]>`
    select delivery_id, endpoint_id, lease_token from private.webhook_claim(200, 100, 40)`;
  const results = claimed.map((c) => ({
    ...c,
    outcome: "delivered",
    attempted_at: new Date().toISOString(),
    duration_ms: 50,
    response_status: 200,
  }));
  await sql`select private.webhook_record_results(${sql.json(results)})`;
  return performance.now() - t;
}
