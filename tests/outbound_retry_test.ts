// How deliveries fail and recover: every kind of bad receiver leads to `retrying` with a later next
// attempt, the 24-hour window ends in `permanently_failed`, a later 2xx ends `delivered`, Retry-After
// and 410 Gone are honoured, a killed dispatcher loses nothing, a hanging endpoint holds no more than
// its cap, and racing dispatchers never send one delivery twice at once.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { type ReceivedRequest, startReceiver } from "./helpers/receiver.ts";
import {
  addMembers,
  createEndpoint,
  deliveriesOf,
  gate,
  killDispatcher,
  retireEndpoints,
  runOutLeases,
  spawnDispatcher,
  startOverlapReceiver,
  startSlammer,
  testEngine,
} from "./helpers/outbound.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { DeliveryEngine } from "../supabase/functions/webhook-dispatcher/engine.ts";
import { DEFAULT_TIMEOUT_MS } from "../supabase/functions/webhook-dispatcher/send.ts";

function secondsFromNow(d: Date | null): number {
  assert(d, "has a next attempt");
  return (d.getTime() - Date.now()) / 1000;
}

Deno.test("the default timeout is the contract's 10 s; tests inject shorter ones", () => {
  assertEquals(DEFAULT_TIMEOUT_MS, 10_000);
  assertEquals(new DeliveryEngine(sql(), { allowPrivateTargets: false }).timeoutMs, 10_000);
  const engine = new DeliveryEngine(sql(), { allowPrivateTargets: false, timeoutMs: 500, leaseSeconds: 1 });
  assert(engine.limits.leaseSeconds > 0.5 + 20, "a lease always outlasts an attempt by a wide margin");
});

Deno.test("500, 302, a hang past the timeout and a closed connection each mean retrying later", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const r500 = await startReceiver(() => new Response("boom", { status: 500 }));
  const r302 = await startReceiver(() =>
    new Response(null, { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } })
  );
  const hang = await startReceiver(() => hold.wait.then(() => new Response("late")));
  const slam = startSlammer();
  const eps = {
    r500: await createEndpoint(tenant.organizationId, `${r500.url}/hook`, ["member.created"]),
    r302: await createEndpoint(tenant.organizationId, `${r302.url}/hook`, ["member.created"]),
    hang: await createEndpoint(tenant.organizationId, `${hang.url}/hook`, ["member.created"]),
    slam: await createEndpoint(tenant.organizationId, slam.url, ["member.created"]),
  };
  try {
    await addMembers(tenant.organizationId, 1);
    const started = Date.now();
    await testEngine({ timeoutMs: 400 }).run({ stopWhenIdle: true });
    assert(Date.now() - started < 5000, "the hanging receiver was cut off by the timeout");

    const expected: Record<keyof typeof eps, [number | null, RegExp]> = {
      r500: [500, /^HTTP 500$/],
      r302: [302, /^redirect 302 not followed/],
      hang: [null, /^timeout: no response within 400 ms$/],
      slam: [null, /^connection error/],
    };
    for (const [name, ep] of Object.entries(eps) as [keyof typeof eps, { id: string }][]) {
      const [d] = await deliveriesOf(ep.id);
      assertEquals(d!.status, "retrying", name);
      assertEquals(d!.attempt_count, 1, name);
      assertEquals(d!.last_response_status, expected[name][0], name);
      assertMatch(d!.last_error ?? "", expected[name][1], name);
      // First retry: 10 s with ±25% jitter.
      const wait = secondsFromNow(d!.next_attempt_at);
      assert(wait > 6 && wait < 13, `${name}: next attempt in ${wait}s`);
      assertEquals(d!.leased_until, null);
    }
    assertEquals(r302.requests.length, 1, "the redirect was not followed");
    assert(slam.connections() >= 1);
    const [attempt] = await sql()<{ response_excerpt: string; response_status: number }[]>`
      select a.response_excerpt, a.response_status from public.webhook_delivery_attempts a
      join public.webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${eps.r500.id}`;
    assertEquals(attempt, { response_excerpt: "boom", response_status: 500 });

    // A later 2xx: delivered, same webhook-id as the first attempt, window start unchanged.
    const [before] = await deliveriesOf(eps.r500.id);
    r500.respond(() => new Response("fine"));
    await sql()`update public.webhook_deliveries set next_attempt_at = now() where id = ${before!.id}`;
    // Past the 24-hour window: the next failure is final.
    const [redirect] = await deliveriesOf(eps.r302.id);
    await sql()`update public.webhook_deliveries
                set first_attempt_at = now() - interval '25 hours', next_attempt_at = now()
                where id = ${redirect!.id}`;
    // Close to the end of the window: the next attempt is clamped to the window's end.
    const [hung] = await deliveriesOf(eps.hang.id);
    await sql()`update public.webhook_deliveries
                set first_attempt_at = now() - interval '24 hours' + interval '30 seconds', next_attempt_at = now()
                where id = ${hung!.id}`;
    await testEngine({ timeoutMs: 400 }).run({ stopWhenIdle: true });

    const [ok] = await deliveriesOf(eps.r500.id);
    assertEquals(ok!.status, "delivered");
    assertEquals(ok!.attempt_count, 2);
    assertEquals(ok!.next_attempt_at, null);
    assertEquals(ok!.first_attempt_at?.getTime(), before!.first_attempt_at?.getTime());
    assertEquals(r500.requests.length, 2);
    assertEquals(r500.requests[0]!.headers.get("webhook-id"), r500.requests[1]!.headers.get("webhook-id"));
    assertEquals(
      r500.requests[0]!.headers.get("x-webhook-id"),
      r500.requests[1]!.headers.get("x-webhook-id"),
    );
    assertEquals(r500.requests[0]!.text, r500.requests[1]!.text, "byte-identical body on retry");

    const [final] = await deliveriesOf(eps.r302.id);
    assertEquals(final!.status, "permanently_failed");
    assertEquals(final!.attempt_count, 2);
    assertEquals(final!.next_attempt_at, null);

    const [clamped] = await deliveriesOf(eps.hang.id);
    assertEquals(clamped!.status, "retrying");
    const wait = secondsFromNow(clamped!.next_attempt_at);
    assert(wait <= 31 && wait > 0, `clamped to the window end, got ${wait}s`);

    const [attempts] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_delivery_attempts a
      join public.webhook_deliveries d on d.id = a.delivery_id where d.organization_id = ${tenant.organizationId}`;
    assertEquals(attempts!.n, 7, "every attempt is recorded");
  } finally {
    hold.open();
    await retireEndpoints(...Object.values(eps).map((e) => e.id));
    slam.close();
    await Promise.all([r500.close(), r302.close(), hang.close()]);
  }
});

Deno.test("Retry-After is honoured; 410 Gone disables the endpoint and ends its deliveries", async () => {
  const tenant = await createTenant();
  const busy = await startReceiver(() =>
    new Response("later", { status: 503, headers: { "retry-after": "120" } })
  );
  const gone = await startReceiver(() => new Response("bye", { status: 410 }));
  const epBusy = await createEndpoint(tenant.organizationId, `${busy.url}/hook`, ["member.created"]);
  const epGone = await createEndpoint(tenant.organizationId, `${gone.url}/hook`, ["member.created"]);
  try {
    await addMembers(tenant.organizationId, 3);
    await testEngine({ perEndpoint: 1 }).run({ stopWhenIdle: true });
    for (const d of await deliveriesOf(epBusy.id)) {
      assertEquals(d.status, "retrying");
      const wait = secondsFromNow(d.next_attempt_at);
      assert(wait > 110 && wait <= 121, `Retry-After 120 s honoured, got ${wait}s`);
    }
    const [endpoint] = await sql()<{ enabled: boolean; disabled_reason: string; disabled_at: Date }[]>`
      select enabled, disabled_reason, disabled_at from public.webhook_endpoints where id = ${epGone.id}`;
    assertEquals(endpoint!.enabled, false);
    assertMatch(endpoint!.disabled_reason, /410 Gone/);
    assert(endpoint!.disabled_at);
    const rows = await deliveriesOf(epGone.id);
    assertEquals(rows.map((d) => d.status), [
      "permanently_failed",
      "permanently_failed",
      "permanently_failed",
    ]);
    assert(gone.requests.length >= 1 && gone.requests.length <= 3);
    await addMembers(tenant.organizationId, 1);
    assertEquals((await deliveriesOf(epGone.id)).length, 3, "a disabled endpoint gets no new deliveries");
  } finally {
    await retireEndpoints(epBusy.id, epGone.id);
    await Promise.all([busy.close(), gone.close()]);
  }
});

Deno.test("a dispatcher killed mid-batch loses nothing: its leases expire and every event arrives", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const receiver = await startReceiver(() => hold.wait.then(() => new Response("late")));
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    await addMembers(tenant.organizationId, 10);
    const child = spawnDispatcher();
    await receiver.waitFor(10, 15_000);
    assertEquals((await killDispatcher(child)).signal, "SIGKILL");

    // Nothing recorded, nothing lost: all still open and leased by the dead dispatcher.
    for (const d of await deliveriesOf(ep.id)) {
      assertEquals(d.status, "pending");
      assertEquals(d.attempt_count, 0);
      assert(d.leased_until && d.leased_until.getTime() > Date.now(), "lease still held");
    }
    // While the lease holds, no other dispatcher sends them.
    hold.open();
    receiver.respond(() => new Response("ok"));
    await testEngine().run({ stopWhenIdle: true });
    assertEquals(receiver.requests.length, 10);

    // The lease runs out (the clock moved on), and the next run takes it over and delivers all. One claim
    // without a result is no reason to set a delivery aside.
    await runOutLeases([ep.id]);
    const [hk] = await sql()<{ r: { set_aside: number } }[]>`select private.webhook_housekeeping() as r`;
    assertEquals(hk!.r.set_aside, 0);
    await testEngine().run({ stopWhenIdle: true });
    await receiver.waitFor(20);
    for (const d of await deliveriesOf(ep.id)) assertEquals(d.status, "delivered");
    const byId = new Map<string, ReceivedRequest[]>();
    for (const r of receiver.requests) {
      const id = r.headers.get("webhook-id")!;
      byId.set(id, [...(byId.get(id) ?? []), r]);
      assertEquals(JSON.parse(r.text).id, id);
    }
    assertEquals(byId.size, 10);
    for (const copies of byId.values()) {
      assertEquals(copies.length, 2, "each event once before the kill and once after");
      assertEquals(copies[0]!.text, copies[1]!.text);
      assertEquals(copies[0]!.headers.get("x-webhook-id"), copies[1]!.headers.get("x-webhook-id"));
    }
  } finally {
    hold.open();
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("an endpoint that never answers holds at most its cap; the others are not slowed", async () => {
  const tenant = await createTenant();
  const hold = gate();
  let active = 0;
  let maxActive = 0;
  const hanging = await startReceiver(async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    await hold.wait;
    active--;
    return new Response("late");
  });
  const a = await startReceiver();
  const b = await startReceiver();
  const epH = await createEndpoint(tenant.organizationId, `${hanging.url}/hook`, ["member.created"]);
  const epA = await createEndpoint(tenant.organizationId, `${a.url}/hook`, ["member.created"]);
  const epB = await createEndpoint(tenant.organizationId, `${b.url}/hook`, ["member.created"]);
  try {
    await addMembers(tenant.organizationId, 10);
    const timeoutMs = 3000;
    const started = Date.now();
    // 6 slots, 2 per endpoint: without the cap the hanging endpoint could take all 6.
    const engine = testEngine({ timeoutMs, maxInFlight: 6, perEndpoint: 2 });
    const run = engine.run({ stopWhenIdle: true, deadline: started + 1500 });
    await Promise.all([a.waitFor(10, 10_000), b.waitFor(10, 10_000)]);
    const healthyDone = Math.max(...[...a.requests, ...b.requests].map((r) => r.receivedAt)) - started;
    assert(healthyDone < timeoutMs, `healthy endpoints finished in ${healthyDone} ms, before any timeout`);
    await run;
    assertEquals(maxActive, 2, "the hanging endpoint never had more than its cap in flight");
    assertEquals(hanging.requests.length, 2);
    const statuses = (await deliveriesOf(epA.id)).concat(await deliveriesOf(epB.id)).map((d) => d.status);
    assertEquals(statuses.filter((s) => s === "delivered").length, 20);
  } finally {
    hold.open();
    await retireEndpoints(epH.id, epA.id, epB.id);
    await Promise.all([hanging.close(), a.close(), b.close()]);
  }
});

Deno.test("two dispatchers racing never send the same delivery concurrently", async () => {
  const tenant = await createTenant();
  const { receiver, counts } = await startOverlapReceiver();
  const seen = counts.seen;
  const ep1 = await createEndpoint(tenant.organizationId, `${receiver.url}/one`, ["member.created"]);
  const ep2 = await createEndpoint(tenant.organizationId, `${receiver.url}/two`, ["member.created"]);
  const pools = [createSql(testDbUrl(), { max: 3 }), createSql(testDbUrl(), { max: 3 })];
  try {
    await addMembers(tenant.organizationId, 150);
    const engines = pools.map((p) =>
      new DeliveryEngine(p, { allowPrivateTargets: true, maxInFlight: 32, claimBatch: 20, log: () => {} })
    );
    const stats = await Promise.all(engines.map((e) => e.run({ stopWhenIdle: true })));
    await receiver.waitFor(300);
    assertEquals(counts.overlap, 0, "no delivery was in flight twice at once");
    assertEquals(seen.size, 300);
    assert([...seen.values()].every((n) => n === 1), "each delivery sent exactly once");
    assert(stats[0]!.claimed + stats[1]!.claimed >= 300);
    const rows = (await deliveriesOf(ep1.id)).concat(await deliveriesOf(ep2.id));
    assert(rows.every((d) => d.status === "delivered" && d.attempt_count === 1));
  } finally {
    await retireEndpoints(ep1.id, ep2.id);
    await Promise.all(pools.map((p) => p.end()));
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
