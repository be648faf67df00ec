// Webhook Logs' content search is indexed off the write path: recording 5,000 members in one statement
// (20,000 deliveries) writes no search keys; the job the cron schedule runs (webhook-search-index,
// 20261129100000_webhook_logs_search.sql), driven here as pg_cron drives it, makes a delivery of that
// load searchable through the configuration API within 60 s of its recording, and until then the answer
// says how far the search reaches.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { createEndpoint, retireEndpoints, type TestEndpoint } from "./helpers/outbound.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

const MEMBERS = 5000;

Deno.test("a delivery recorded under load is found by content within 60 s; the answer says how far the search reaches", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const t = await createTenant();
  const admin = asBearer(await tokenFor(t.admin, t.organizationId));
  // Four endpoints no dispatcher serves here: the deliveries stay due, so the job waits for them to go
  // out until the index is 10 s behind, as it does under a backlog.
  const endpoints: TestEndpoint[] = [];
  for (let i = 0; i < 4; i++) {
    endpoints.push(
      await createEndpoint(t.organizationId, `http://127.0.0.1:9/hook-${i}`, ["member.created"]),
    );
  }
  const mark = crypto.randomUUID().slice(0, 8);
  try {
    await sql()`insert into public.members (organization_id, first_name, last_name, email)
                select ${t.organizationId}, 'Maria ' || g, 'Fernandes', 'm' || g || '.' || ${mark} || '@example.org'
                from generate_series(1, ${MEMBERS}::int) g`;
    const recorded = Date.now();
    const [load] = await sql()<{ deliveries: number; keys: number }[]>`
      select (select count(*)::int from public.webhook_deliveries where organization_id = ${t.organizationId})
               as deliveries,
             (select count(*)::int from private.webhook_event_search where organization_id = ${t.organizationId})
               as keys`;
    assertEquals(load!.deliveries, MEMBERS * 4);
    assertEquals(load!.keys, 0, "recording the events wrote no search keys");

    // A delivery beyond the newest 2,000 (which a search checks one by one): found only through the index.
    const [target] = await sql()<{ email: string; created_at: Date }[]>`
      select e.payload #>> '{data,row,email}' as email, d.created_at
      from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
      where d.organization_id = ${t.organizationId}
      order by d.created_at desc, d.id desc offset 10000 limit 1`;
    const search = async () => {
      const r = await call(
        api.base,
        "GET",
        `/deliveries?contains=${encodeURIComponent(target!.email)}`,
        admin,
      );
      assertEquals(r.status, 200, r.text);
      return r.data as { data: { endpoint_id: string }[]; searchable_until: string | null };
    };
    const before = await search();
    assert(
      before.searchable_until === null || Date.parse(before.searchable_until) < recorded,
      `before the job ran the answer says the search reaches ${before.searchable_until}, before the load`,
    );

    // The cron job's procedure, in short runs (its own runs last up to 55 s, one a minute).
    let found: Awaited<ReturnType<typeof search>> | undefined;
    let last: Awaited<ReturnType<typeof search>> | undefined;
    // The load's own time once all its batches are done (one statement wrote it: one created_at).
    const reaches = (r: typeof last) =>
      r?.searchable_until != null &&
      Date.parse(r.searchable_until) >= Math.floor(target!.created_at.getTime());
    while (Date.now() - recorded < 60_000 && !(found && reaches(last))) {
      // The simple protocol, as pg_cron sends it: a procedure that commits cannot run as a prepared one.
      await sql()`call private.webhook_search_index_run(interval '1 second')`.simple();
      last = await search();
      if (!found && last.data.length > 0) {
        found = last;
        console.log(`found ${((Date.now() - recorded) / 1000).toFixed(1)} s after its recording`);
      }
    }
    assert(found, `not found within 60 s of its recording`);
    assertEquals(found.data.length, 4, "its four deliveries");
    assert(found.data.every((d) => endpoints.some((e) => e.id === d.endpoint_id)));
    // Found through the index before the last of the load's batches may be done; the answer's horizon
    // says the load once they are, within the same 60 s.
    assert(reaches(last), `the search reaches the load within 60 s (${last?.searchable_until})`);

    // A listing without `contains` says nothing about the search.
    const plain = await call(api.base, "GET", "/deliveries?limit=1", admin);
    assertEquals("searchable_until" in plain.data, false);
  } finally {
    await retireEndpoints(...endpoints.map((e) => e.id));
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
