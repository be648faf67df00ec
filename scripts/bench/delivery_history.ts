// Delivery history for the Webhook Logs and retention benchmarks: 100 organizations with 4 endpoints
// each, events over the last 30 days, each delivered to every endpoint (the measured organization also
// has a fifth endpoint that gets 0.5% of its events). The measured organization holds 100,000
// deliveries or its even share, whichever is more (at 1M it holds a tenth of everything, so a page
// 50,000 rows deep exists; at 10M every organization holds 100,000, the target scale); the others share
// the rest. The newest minutes are still pending, 2% permanently failed after 16 attempts over their
// 24-hour retry window, the rest delivered at the first attempt.
//
// Loaded as the production tables would hold it: rows in time order with every organization's
// interleaved, every index and constraint of the migrations in place, bodies the size of a real
// member.created event. Three INSERT ... SELECT statements (events, deliveries, attempts) with the
// foreign-key and other triggers off (session_replication_role = replica), as a restore would (so the
// deliveries carry their event's type and size themselves, as the outbox writes them); the
// attempts of the last 25 hours go in with triggers on, so the endpoint health tables hold what the
// trigger would have folded.
import type postgres from "postgres";

export const TYPES = [
  "member.created",
  "member.lost",
  "donation.recorded",
  "attendance.marked",
  "workflow.completed",
];

export const SPARSE = "https://sparse.example.org/hook";

export const FAILED_ATTEMPTS = 16; // 10 s doubling to 4 h, over a 24-hour retry window

export async function loadHistory(sql: postgres.Sql, total: number, opts: { attempts?: boolean } = {}) {
  const ORGS = 100;
  const ENDPOINTS = 4;
  const bigEvents = Math.max(Math.round(total / ORGS / ENDPOINTS), 25_000);
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
  // And one the measured organization uses rarely (0.5% of its events), for the endpoint listing of
  // an endpoint whose rows are few among many.
  await sql`
    insert into public.webhook_endpoints (organization_id, url, events)
    values (${big}::uuid, ${SPARSE}, ${TYPES}::text[])`;

  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`set local work_mem = '256MB'`;
    // A member.created body as the outbox builds it (the row, and as an insert's delta the row again).
    await tx`
      create temp table template on commit drop as
      select private.webhook_envelope(gen_random_uuid(), 'member.created', ${big}::uuid, to_jsonb(m), to_jsonb(m)) as body
      from (select gen_random_uuid() as id, ${big}::uuid as organization_id, 'Maria Aparecida' as first_name,
                   'Fernandes da Silva' as last_name, 'maria.fernandes@example.org' as email,
                   '+55 11 91234-5678' as primary_phone, '5511912345678' as primary_phone_normalized,
                   'active' as status, 'manual' as source, now() as created_at, now() as updated_at) m`;
    await tx`
      insert into public.webhook_events (id, organization_id, type, payload, created_at)
      select e.id, e.organization_id, e.type,
             t.body || jsonb_build_object('id', e.id, 'type', e.type, 'created_at', e.created_at,
                                          'organization_id', e.organization_id),
             e.created_at
      from (select gen_random_uuid() as id, o.id as organization_id,
                   (${TYPES}::text[])[1 + floor(random() * ${TYPES.length}::int)::int] as type,
                   now() - random() * interval '30 days' as created_at
            from public.organizations o,
                 generate_series(1, case when o.id = ${big}::uuid then ${bigEvents}::int else ${otherEvents}::int end)) e,
           template t
      order by e.created_at`;
    await tx`
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, body_bytes, status,
                                             attempt_count, next_attempt_at, first_attempt_at, last_attempt_at,
                                             last_response_status, last_error, delivered_at, created_at)
      select d.organization_id, d.event_id, d.endpoint_id, d.type, d.body_bytes, d.status,
             case d.status when 'pending' then 0 when 'delivered' then 1 else ${FAILED_ATTEMPTS} end,
             case when d.status = 'pending' then d.created_at end,
             case when d.status <> 'pending' then d.created_at + interval '1 second' end,
             case d.status when 'delivered' then d.created_at + interval '1 second'
                           when 'permanently_failed' then least(d.created_at + interval '24 hours', now()) end,
             case d.status when 'delivered' then 200 when 'permanently_failed' then 503 end,
             case when d.status = 'permanently_failed' then 'HTTP 503' end,
             case when d.status = 'delivered' then d.created_at + interval '1 second' end,
             d.created_at
      from (select ev.organization_id, ev.id as event_id, ep.id as endpoint_id, ev.type, ev.body_bytes, ev.created_at,
                   case when ev.created_at > now() - interval '10 minutes' then 'pending'
                        when random() < 0.02 then 'permanently_failed' else 'delivered' end as status
            from public.webhook_events ev
            join public.webhook_endpoints ep
              on ep.organization_id = ev.organization_id and (ep.url <> ${SPARSE} or hashtext(ev.id::text) % 200 = 0)) d
      order by d.created_at`;
  });
  if (opts.attempts) await loadAttempts(sql);
  await sql`vacuum analyze`;
  const { n, bytes } = (await sql<{ n: number; bytes: string }[]>`
    select count(*)::int as n, pg_size_pretty(pg_total_relation_size('public.webhook_deliveries')) as bytes
    from public.webhook_deliveries`)[0]!;
  const loadSeconds = (performance.now() - t0) / 1000;
  return { big, n, bytes, loadSeconds, bigEvents, ORGS, ENDPOINTS };
}

// Every attempt the finished deliveries made: the first one a second after the delivery was made, a
// failed delivery's retries spread over its 24-hour window (capped at now), with the receiver's reply.
async function loadAttempts(sql: postgres.Sql) {
  const insert = (tx: postgres.TransactionSql, recent: boolean) =>
    tx`
    insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
                                                  duration_ms, response_status, error, response_excerpt, created_at)
    select a.organization_id, a.delivery_id, a.n, a.at, a.duration_ms, a.status, a.error, a.excerpt, a.at
    from (select d.organization_id, d.id as delivery_id, n,
                 least(d.created_at + interval '1 second'
                       + (n - 1) * interval '24 hours' / ${FAILED_ATTEMPTS - 1}, now()) as at,
                 (80 + random() * 400)::int as duration_ms,
                 case when d.status = 'delivered' then 200 else 503 end as status,
                 case when d.status = 'delivered' then null else 'HTTP 503' end as error,
                 case when d.status = 'delivered' then '{"received":true}'
                      else '<html><head><title>503 Service Unavailable</title></head><body><h1>Service '
                           || 'Unavailable</h1><p>The server is temporarily unable to service your request.</p></body></html>'
                 end as excerpt
          from public.webhook_deliveries d, generate_series(1, d.attempt_count) n) a
    where (a.at >= now() - interval '25 hours') = ${recent}
    order by a.at`;
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`set local work_mem = '256MB'`;
    await insert(tx, false);
  });
  // The last 25 hours through the health trigger, as the dispatcher's inserts would have gone.
  await sql.begin((tx) => insert(tx, true));
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
    select delivery_id, endpoint_id, lease_token from private.webhook_claim(200, 33554432, 100, 200, 40)`;
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
