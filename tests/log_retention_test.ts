// The scheduled retention run (private.retention_run, what pg_cron calls) for real: it commits batch by
// batch outside any transaction, and a row someone else holds locked neither stops nor delays it.
import postgres from "postgres";
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createOrganization, sql, testDbUrl } from "./helpers/db.ts";

async function oldHistory(organizationId: string, endpointId: string, count: number, tag: string) {
  await sql()`
    with ev as (
      insert into public.webhook_events (organization_id, type, payload, created_at)
      select ${organizationId}, 'member.created', jsonb_build_object('tag', ${tag}::text), now() - interval '45 days'
      from generate_series(1, ${count})
      returning id, created_at
    ), d as (
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, status,
                                             next_attempt_at, attempt_count, last_attempt_at, created_at)
      select ${organizationId}, ev.id, ${endpointId}, 'member.created', 'delivered', null, 1, ev.created_at,
             ev.created_at
      from ev returning id, created_at
    )
    insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
                                                  response_status)
    select ${organizationId}, d.id, 1, d.created_at, 200 from d`;
}

async function remaining(tag: string) {
  const [row] = await sql()<{ events: number; deliveries: number; attempts: number }[]>`
    select count(distinct e.id)::int as events, count(distinct d.id)::int as deliveries,
           count(a.id)::int as attempts
    from public.webhook_events e
    left join public.webhook_deliveries d on d.event_id = e.id
    left join public.webhook_delivery_attempts a on a.delivery_id = d.id
    where e.payload ->> 'tag' = ${tag}`;
  return row!;
}

Deno.test("retention_run removes old history in committed batches and passes over locked rows", async () => {
  const org = await createOrganization();
  const [ep] = await sql()<{ id: string }[]>`
    insert into public.webhook_endpoints (organization_id, url, events)
    values (${org}, 'https://retention.example.org/hook', array['member.created']) returning id`;
  const tag = crypto.randomUUID();
  await oldHistory(org, ep!.id, 25, tag);
  assertEquals(await remaining(tag), { events: 25, deliveries: 25, attempts: 25 });

  // Someone holds one of the events locked (a long transaction elsewhere).
  const holder = postgres(testDbUrl(), { max: 1, onnotice: () => {} });
  const runner = postgres(testDbUrl(), { max: 1, onnotice: () => {} });
  try {
    let release!: () => void;
    const released = new Promise<void>((r) => release = r);
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => locked = r);
    const holding = holder.begin(async (tx) => {
      await tx`select id from public.webhook_events where payload ->> 'tag' = ${tag} limit 1 for update`;
      locked();
      await released;
    });
    await isLocked;

    // Batches of 10: 10 + 10 + 4, each committed; the locked event is skipped, not waited for.
    const t0 = performance.now();
    await runner`call private.retention_run(10)`;
    const took = performance.now() - t0;
    assertEquals(await remaining(tag), { events: 1, deliveries: 1, attempts: 1 });
    assert(took < 5_000, `the run waited for the lock (${took.toFixed(0)} ms)`);
    release();
    await holding;
    await runner`call private.retention_run(10)`;
    assertEquals(await remaining(tag), { events: 0, deliveries: 0, attempts: 0 });

    // The procedure commits, so it cannot run inside a caller's transaction (pg_cron calls it alone).
    const err = await runner.begin((tx) => tx`call private.retention_run(10)`).catch((e) => e);
    assertEquals((err as { code?: string }).code, "2D000");
  } finally {
    await holder.end();
    await runner.end();
  }
});

Deno.test("users cannot call the retention run", async () => {
  const err = await sql().begin(async (tx) => {
    await tx`set local role authenticated`;
    await tx`call private.retention_run(10)`;
  }).catch((e) => e);
  assertEquals((err as { code?: string }).code, "42501");
});

Deno.test("cleanup", async () => {
  await closeSql();
});
