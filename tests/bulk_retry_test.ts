// Bulk retry through the configuration API (POST /deliveries/retry and its preview, progress and cancel)
// against the real database and a real dispatcher engine sending to a 127.0.0.1 receiver.
import { assert, assertEquals } from "./helpers/assert.ts";
import { addMember, asConfigApi, closeSql, createTenant, createUser, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { addMembers, createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";

const start = () => startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
const drain = () => testEngine().run({ stopWhenIdle: true });

/** `count` deliveries of the endpoint that failed once and are due again in an hour. */
async function retrying(organizationId: string, endpointId: string, count: number) {
  await sql()`
    with e as (
      insert into public.webhook_events (organization_id, type, payload)
      select ${organizationId}, 'member.created', '{}'::jsonb from generate_series(1, ${count}::int) g returning id
    )
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at,
                                           attempt_count, first_attempt_at)
    select ${organizationId}, e.id, ${endpointId}, 'retrying', now() + interval '1 hour', 1, now() from e`;
}

Deno.test("bulk retry: filters, preview, idempotency, sent once with a dispatcher racing, who may", async () => {
  const api = await start();
  const receiver = await startReceiver(() => new Response("no", { status: 500 }));
  const a = await createTenant();
  const b = await createTenant();
  const one = await createEndpoint(a.organizationId, `${receiver.url}/one`, [
    "member.created",
  ]);
  const two = await createEndpoint(a.organizationId, `${receiver.url}/two`, [
    "member.created",
  ]);
  const theirs = await createEndpoint(
    b.organizationId,
    `${receiver.url}/theirs`,
    ["member.created"],
  );
  try {
    await addMembers(a.organizationId, 3);
    await addMembers(b.organizationId, 2);
    await drain();
    // Every delivery failed once (500) and is retrying, next due in an hour. Then some variety: on
    // `one`, a 404 that failed for good and a test delivery; on `two`, one two days old, one of another
    // event type, one delivered.
    await sql()`update public.webhook_deliveries set next_attempt_at = now() + interval '1 hour'
                where endpoint_id in (${one.id}, ${two.id}, ${theirs.id}) and status = 'retrying'`;
    const [o1, o2] = await deliveriesOf(one.id);
    const [t1, t2, t3] = await deliveriesOf(two.id);
    await sql()`update public.webhook_deliveries set status = 'permanently_failed', next_attempt_at = null,
                last_response_status = 404 where id = ${o1!.id}`;
    await sql()`update public.webhook_deliveries set test = true where id = ${o2!.id}`;
    await sql()`update public.webhook_deliveries set created_at = now() - interval '2 days' where id = ${
      t1!.id
    }`;
    await sql()`update public.webhook_deliveries set event_type = 'member.updated' where id = ${t2!.id}`;
    await sql()`update public.webhook_deliveries set status = 'delivered', next_attempt_at = null,
                delivered_at = now() where id = ${t3!.id}`;
    const before = await sql()<{ id: string; first_attempt_at: Date }[]>`
      select id, first_attempt_at from public.webhook_deliveries where endpoint_id = ${one.id} order by id`;

    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const preview = async (
      filter: Record<string, unknown>,
      who: Record<string, string> = admin,
    ) => await call(api.base, "POST", "/deliveries/retry/preview", who, filter);
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const cases: [Record<string, unknown>, number][] = [
      [{}, 5],
      [{ endpoint_id: one.id }, 3],
      [{ status: "permanently_failed" }, 1],
      [{ status: "retrying" }, 4],
      [{ status_class: "4xx" }, 1],
      [{ status_class: "5xx" }, 4],
      [{ status_class: "none" }, 0],
      [{ event_type: "member.updated" }, 1],
      [{ since }, 4],
      [{ until: since }, 1],
      [{ tests: "only" }, 1],
      [{ tests: "exclude" }, 4],
      [{ endpoint_id: two.id, status_class: "5xx", tests: "exclude" }, 2],
    ];
    for (const [filter, n] of cases) {
      const r = await preview(filter);
      assertEquals(
        [r.status, r.data?.count],
        [200, n],
        `${JSON.stringify(filter)}: ${r.text}`,
      );
    }
    // The listing takes the same filter: its rows are the preview's plus the delivered one.
    const listed = await call(
      api.base,
      "GET",
      `/deliveries?endpoint_id=${two.id}&status_class=5xx`,
      admin,
    );
    assertEquals(listed.data.data.length, 3);
    const delivered = await preview({ status: "delivered" });
    assertEquals(
      delivered.status,
      400,
      "delivered ones are never taken up by a bulk retry",
    );
    assert(delivered.text.includes("redeliver"), delivered.text);

    // A hostile filter: another organization's endpoint answers as one that does not exist, and its
    // deliveries stay as they were.
    for (const path of ["/deliveries/retry/preview", "/deliveries/retry"]) {
      const r = await call(api.base, "POST", path, admin, {
        endpoint_id: theirs.id,
      });
      assertEquals(r.status, 404, `${path}: ${r.text}`);
    }

    // Nor does a recovery id that B's deliveries carry: the organization bounds the filter, not its ids.
    const theirRecovery = crypto.randomUUID();
    await sql()`update public.webhook_deliveries set recovery_id = ${theirRecovery} where endpoint_id = ${theirs.id}`;
    assertEquals((await preview({ recovery_id: theirRecovery })).data.count, 0);
    const aimed = await call(api.base, "POST", "/deliveries/retry", admin, { recovery_id: theirRecovery });
    assertEquals([aimed.status, aimed.data.total, aimed.data.retried], [202, 0, 0]);

    // Who may: staff, a removed admin and anonymous callers may not; an API key of the organization may.
    const staff = asBearer(await tokenFor(a.staff, a.organizationId));
    const removed = await createUser();
    await addMember(removed.id, a.organizationId, "admin");
    const removedToken = asBearer(await tokenFor(removed, a.organizationId));
    await sql()`delete from public.profiles where user_id = ${removed.id}`;
    for (
      const [who, status] of [[staff, 403], [removedToken, 403], [
        { "content-type": "application/json" },
        401,
      ]] as [
        Record<string, string>,
        number,
      ][]
    ) {
      assertEquals((await preview({}, who)).status, status);
      assertEquals(
        (await call(api.base, "POST", "/deliveries/retry", who, {})).status,
        status,
      );
    }
    const key = (await call(api.base, "POST", "/api-keys", admin, { name: "automation" }))
      .data.key as string;
    const asKey = { "x-api-key": key, "content-type": "application/json" };
    assertEquals(
      (await preview({ endpoint_id: one.id }, asKey)).data.count,
      3,
      "an API key may",
    );

    // The retry, with a dispatcher racing it, under an Idempotency-Key.
    receiver.respond(() => new Response("ok"));
    const keyed = {
      ...admin,
      "idempotency-key": `retry-${crypto.randomUUID()}`,
    };
    const [started] = await Promise.all([
      call(api.base, "POST", "/deliveries/retry", keyed, {
        endpoint_id: one.id,
      }),
      drain(),
      drain(),
    ]);
    assertEquals(started.status, 202, started.text);
    assertEquals([
      started.data.status,
      started.data.total,
      started.data.retried,
    ], ["done", 3, 3]);
    const job = started.data.id as string;
    assertEquals(started.data.recovery_id, job);

    // Moved to now without an attempt counted; the retrying ones keep their window.
    const after = await sql()<
      { id: string; first_attempt_at: Date | null; attempt_count: number }[]
    >`
      select d.id, d.first_attempt_at, d.attempt_count from public.webhook_deliveries d
       where d.endpoint_id = ${one.id} order by d.id`;
    for (const [i, d] of after.entries()) {
      if (d.id === o1!.id) continue;
      assertEquals(
        d.first_attempt_at?.getTime(),
        before[i]!.first_attempt_at.getTime(),
        "window kept",
      );
    }
    const listedRetry = await call(
      api.base,
      "GET",
      `/deliveries?recovery_id=${job}`,
      admin,
    );
    assertEquals(listedRetry.data.data.length, 3);

    // The same key again: the same job, nothing more queued.
    const again = await call(api.base, "POST", "/deliveries/retry", keyed, {
      endpoint_id: one.id,
    });
    assertEquals([again.status, again.data.id, again.data.retried], [
      202,
      job,
      3,
    ]);
    const reused = await call(api.base, "POST", "/deliveries/retry", keyed, {
      endpoint_id: two.id,
    });
    assertEquals([reused.status, reused.data?.error?.code], [
      409,
      "idempotency_key_reused",
    ]);

    await drain();
    await drain();
    const done = await deliveriesOf(one.id);
    assertEquals(done.map((d) => d.status), [
      "delivered",
      "delivered",
      "delivered",
    ]);
    assertEquals(
      done.map((d) => d.attempt_count),
      [2, 2, 2],
      "one attempt each since the first: no attempt for the move",
    );
    // Each sent exactly once more: twice in all (the first failure, then the retry).
    const sent = new Map<string, number>();
    for (const r of receiver.requests.filter((r) => r.path === "/one")) {
      const id = r.headers.get("webhook-id")!;
      sent.set(id, (sent.get(id) ?? 0) + 1);
    }
    assertEquals([...sent.values()], [2, 2, 2]);
    // `two` and B's were not touched.
    assert((await deliveriesOf(two.id)).every((d) => d.attempt_count === 1));
    assert(
      (await deliveriesOf(theirs.id)).every((d) => d.status === "retrying" && d.attempt_count === 1),
    );

    // A disabled endpoint named in the filter: refused, with what to do.
    await sql()`update public.webhook_endpoints set enabled = false where id = ${two.id}`;
    const refused = await call(api.base, "POST", "/deliveries/retry", admin, {
      endpoint_id: two.id,
    });
    assertEquals([refused.status, refused.data?.error?.code], [
      409,
      "endpoint_disabled",
    ]);
    // Without the endpoint in the filter, its deliveries are skipped and counted.
    const wide = await call(api.base, "POST", "/deliveries/retry", admin, {
      status: "permanently_failed",
    });
    assertEquals(wide.data.skipped, { endpoint_disabled: 2 }, wide.text);
    assertEquals(wide.data.retried, 0);
  } finally {
    await retireEndpoints(one.id, two.id, theirs.id);
    await receiver.close();
    await api.close();
  }
});

Deno.test("bulk retry: cancel stops the remaining batches; another organization's job is not found", async () => {
  const api = await start();
  const a = await createTenant();
  const b = await createTenant();
  const ep = await createEndpoint(
    a.organizationId,
    "http://127.0.0.1:9/never",
    ["member.created"],
  );
  try {
    await sql()`
      with e as (
        insert into public.webhook_events (organization_id, type, payload)
        select ${a.organizationId}, 'member.created', jsonb_build_object('n', g) from generate_series(1, 2500) g
        returning id
      )
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at,
                                             attempt_count, first_attempt_at, last_response_status)
      select ${a.organizationId}, e.id, ${ep.id}, 'retrying', now() + interval '1 hour', 1, now(), 503 from e`;
    // Started without the API's own batches, then one batch, then cancelled.
    const [row] = await asConfigApi(
      a.adminClaims,
      (tx) =>
        tx<
          { id: string }[]
        >`select public.webhook_bulk_retry('{"tests": "include"}'::jsonb) as id`,
    );
    const job = row!.id;
    await sql()`select private.webhook_bulk_retry_step(${job}, 1000)`;
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const otherAdmin = asBearer(await tokenFor(b.admin, b.organizationId));
    assertEquals(
      (await call(api.base, "GET", `/deliveries/retries/${job}`, otherAdmin))
        .status,
      404,
    );
    assertEquals(
      (await call(
        api.base,
        "POST",
        `/deliveries/retries/${job}/cancel`,
        otherAdmin,
      )).status,
      404,
    );

    const cancelled = await call(
      api.base,
      "POST",
      `/deliveries/retries/${job}/cancel`,
      admin,
    );
    assertEquals(cancelled.status, 200, cancelled.text);
    assertEquals([
      cancelled.data.status,
      cancelled.data.total,
      cancelled.data.processed,
    ], [
      "cancelled",
      2500,
      1000,
    ]);
    // Nothing more, whoever asks: a poll, the cron job's procedure.
    await call(api.base, "GET", `/deliveries/retries/${job}`, admin);
    await sql()`call private.webhook_bulk_retry_run(1000, interval '5 seconds')`;
    const [moved] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_deliveries where endpoint_id = ${ep.id} and next_attempt_at <= now()`;
    assertEquals(moved!.n, 1000, "only the first batch was moved");
    const progress = await call(
      api.base,
      "GET",
      `/deliveries/retries/${job}`,
      admin,
    );
    assertEquals([
      progress.data.status,
      progress.data.processed,
      progress.data.retried,
    ], [
      "cancelled",
      1000,
      1000,
    ]);
  } finally {
    await retireEndpoints(ep.id);
    await api.close();
  }
});

Deno.test("bulk retry: a poll carries a running job on to its end", async () => {
  const api = await start();
  const a = await createTenant();
  const ep = await createEndpoint(
    a.organizationId,
    "http://127.0.0.1:9/never",
    ["member.created"],
  );
  try {
    await retrying(a.organizationId, ep.id, 1500);
    const [row] = await asConfigApi(
      a.adminClaims,
      (tx) =>
        tx<
          { id: string }[]
        >`select public.webhook_bulk_retry('{}'::jsonb) as id`,
    );
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    let progress;
    for (let i = 0; i < 10; i++) {
      progress = await call(
        api.base,
        "GET",
        `/deliveries/retries/${row!.id}`,
        admin,
      );
      if (progress.data.status !== "running") break;
    }
    assertEquals([
      progress!.data.status,
      progress!.data.processed,
      progress!.data.retried,
    ], [
      "done",
      1500,
      1500,
    ]);
  } finally {
    await retireEndpoints(ep.id);
    await api.close();
  }
});

Deno.test("bulk retry: WEBHOOKS_BULK_RETRY_BUDGET_MS=0 carries a job on by one batch a request", async () => {
  const api = await startWebhooksApi({
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOKS_BULK_RETRY_BUDGET_MS: "0",
  });
  const a = await createTenant();
  const ep = await createEndpoint(a.organizationId, "http://127.0.0.1:9/never", ["member.created"]);
  try {
    await retrying(a.organizationId, ep.id, 2500);
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const started = await call(api.base, "POST", "/deliveries/retry", admin, { endpoint_id: ep.id });
    assertEquals(started.status, 202);
    const seen = [[started.data.status, started.data.processed]];
    for (let i = 0; i < 2; i++) {
      const progress = await call(api.base, "GET", `/deliveries/retries/${started.data.id}`, admin);
      seen.push([progress.data.status, progress.data.processed]);
    }
    assertEquals(seen, [["running", 1000], ["running", 2000], ["done", 2500]]);
  } finally {
    await retireEndpoints(ep.id);
    await api.close();
  }
});

Deno.test("bulk retry: close the database pool", async () => {
  await closeSql();
});
