// Operations the settings area needs (redeliver, recover failed since, test event, secret rotation with
// a grace period) and the webhook-dispatcher function's own surface (bearer secret, bounded run).
import { Webhook } from "standardwebhooks";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { asConfigApi, closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { serveFunction } from "./helpers/server.ts";
import {
  addMembers,
  createEndpoint,
  deliveriesOf,
  headerObject,
  retireEndpoints,
  testEngine,
} from "./helpers/outbound.ts";
import { verifyHexSignature } from "../supabase/functions/_shared/hmac.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp } from "../supabase/functions/webhook-dispatcher/app.ts";

Deno.test("redeliver one delivery and recover an endpoint's failed deliveries since a time", async () => {
  const tenant = await createTenant();
  const other = await createTenant();
  const receiver = await startReceiver(() => new Response("no", { status: 500 }));
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    await addMembers(tenant.organizationId, 3);
    await testEngine().run({ stopWhenIdle: true });
    // All three end permanently_failed (window closed); one of them was created "long ago".
    await sql()`update public.webhook_deliveries set first_attempt_at = now() - interval '25 hours',
                next_attempt_at = now() where endpoint_id = ${ep.id}`;
    await testEngine().run({ stopWhenIdle: true });
    const failed = await deliveriesOf(ep.id);
    assert(failed.every((d) => d.status === "permanently_failed"));
    await sql()`update public.webhook_deliveries set created_at = now() - interval '3 days' where id = ${
      failed[0]!.id
    }`;
    receiver.respond(() => new Response("ok"));

    // Staff and other organizations' admins may not; the organization's admin may.
    for (const claims of [tenant.staffClaims, other.adminClaims]) {
      const err = await asConfigApi(claims, (tx) => tx`select public.webhook_redeliver(${failed[0]!.id})`)
        .then(
          () => null,
          (e) => e,
        );
      assertEquals(err?.code, "42501");
    }
    await asConfigApi(tenant.adminClaims, (tx) => tx`select public.webhook_redeliver(${failed[0]!.id})`);
    const [recovered] = await asConfigApi(
      tenant.adminClaims,
      (tx) =>
        tx<{ n: number }[]>`select public.webhook_recover_failed(${ep.id}, now() - interval '1 day') as n`,
    );
    assertEquals(recovered!.n, 2, "only the two failed since a day ago");
    const reopened = await deliveriesOf(ep.id);
    assert(
      reopened.every((d) => d.status === "pending" && d.first_attempt_at === null),
      "a fresh 24 h window",
    );

    await testEngine().run({ stopWhenIdle: true });
    const done = await deliveriesOf(ep.id);
    assertEquals(done.map((d) => d.status), ["delivered", "delivered", "delivered"]);
    assertEquals(done.map((d) => d.attempt_count), [3, 3, 3]);
    // Resent deliveries keep their webhook-id: receivers can de-duplicate.
    const ids = new Set(receiver.requests.map((r) => r.headers.get("webhook-id")));
    assertEquals(ids.size, 3);
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("send a test event to one endpoint, signed like every other delivery", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["donation.recorded"]);
  try {
    const [row] = await asConfigApi(
      tenant.adminClaims,
      (tx) => tx<{ id: string }[]>`select public.webhook_send_test_event(${ep.id}) as id`,
    );
    await testEngine().run({ stopWhenIdle: true });
    const [req] = await receiver.waitFor(1);
    assertEquals(req!.headers.get("webhook-id"), row!.id);
    assertEquals(req!.headers.get("x-webhook-event"), "webhook.test");
    const body = new Webhook(ep.secret).verify(req!.text, headerObject(req!.headers)) as { type: string };
    assertEquals(body.type, "webhook.test");
    assert(await verifyHexSignature(ep.secret, req!.body, req!.headers.get("x-webhook-signature")));
    const err = await asConfigApi(
      tenant.staffClaims,
      (tx) => tx`select public.webhook_send_test_event(${ep.id})`,
    )
      .then(() => null, (e) => e);
    assertEquals(err?.code, "42501");
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("rotating a secret signs with both during the grace period, then with the new one only", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    const [rotated] = await asConfigApi(
      tenant.adminClaims,
      (tx) => tx<{ s: string }[]>`select public.webhook_rotate_secret(${ep.id}, interval '1 hour') as s`,
    );
    const fresh = rotated!.s;
    assertMatch(fresh, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert(fresh !== ep.secret);
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'a')`;
    await testEngine().run({ stopWhenIdle: true });
    const [during] = await receiver.waitFor(1);
    assertEquals(during!.headers.get("webhook-signature")!.split(" ").length, 2);
    for (const secret of [fresh, ep.secret]) {
      new Webhook(secret).verify(during!.text, headerObject(during!.headers)); // throws if it does not verify
    }
    assert(await verifyHexSignature(fresh, during!.body, during!.headers.get("x-webhook-signature")));
    assert(
      await verifyHexSignature(ep.secret, during!.body, during!.headers.get("x-webhook-signature-previous")),
    );

    // Grace over: only the new secret signs.
    await sql()`update public.webhook_endpoints set previous_secret_expires_at = now() - interval '1 second'
                where id = ${ep.id}`;
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'b')`;
    await testEngine().run({ stopWhenIdle: true });
    const after = (await receiver.waitFor(2))[1]!;
    assertEquals(after.headers.get("webhook-signature")!.split(" ").length, 1);
    assertEquals(after.headers.get("x-webhook-signature-previous"), null);
    new Webhook(fresh).verify(after.text, headerObject(after.headers));
    let oldVerifies = true;
    try {
      new Webhook(ep.secret).verify(after.text, headerObject(after.headers));
    } catch {
      oldVerifies = false;
    }
    assert(!oldVerifies, "the old secret no longer verifies");
    const err = await asConfigApi(
      tenant.staffClaims,
      (tx) => tx`select public.webhook_rotate_secret(${ep.id})`,
    )
      .then(() => null, (e) => e);
    assertEquals(err?.code, "42501");
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("webhook-dispatcher: bearer secret checked, bounded run, reports what it did", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  const secret = `dispatch-${crypto.randomUUID()}`;
  const deps = {
    config: loadConfig({
      SUPABASE_DB_URL: testDbUrl(),
      WEBHOOK_DISPATCH_SECRET: secret,
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    }),
    sql: sql(),
  };
  const fn = await serveFunction("webhook-dispatcher", createApp(deps));
  const unconfigured = await serveFunction(
    "webhook-dispatcher",
    createApp({ ...deps, config: { ...deps.config, dispatchSecret: undefined } }),
  );
  try {
    const post = (base: string, headers: Record<string, string>, body = "{}") =>
      fetch(base, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong" }, {
      authorization: secret,
    }];
    for (const auth of attempts) {
      const res = await post(fn.base, auth);
      assertEquals(res.status, 401);
      assertEquals((await res.json()).error.code, "unauthorized");
    }
    const res503 = await post(unconfigured.base, { authorization: `Bearer ${secret}` });
    assertEquals(res503.status, 503);
    await res503.body?.cancel();
    const bad = await post(fn.base, { authorization: `Bearer ${secret}` }, '{"budget_ms": 5}');
    assertEquals(bad.status, 400);
    await bad.body?.cancel();

    const [m] = await sql()<{ id: string }[]>`
      insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x') returning id`;
    await sql()`insert into public.attendance (organization_id, member_id) values (${tenant.organizationId}, ${
      m!.id
    })`;
    const started = Date.now();
    const ok = await post(
      fn.base,
      { authorization: `Bearer ${secret}` },
      '{"budget_ms": 15000, "stop_when_idle": true}',
    );
    assertEquals(ok.status, 200);
    const stats = await ok.json();
    assert(stats.delivered >= 1 && stats.claimed >= 1, JSON.stringify(stats));
    assert(Date.now() - started < 15000, "answered within its budget");
    await receiver.waitFor(1);
    assertEquals((await deliveriesOf(ep.id))[0]!.status, "delivered");

    // An invocation stops claiming at max_deliveries (2 s of CPU per hosted request); the next one
    // picks up the rest.
    await sql()`insert into public.attendance (organization_id, member_id)
                select ${tenant.organizationId}, ${m!.id} from generate_series(1, 3)`;
    const capped = await post(
      fn.base,
      { authorization: `Bearer ${secret}` },
      '{"stop_when_idle": true, "max_deliveries": 2}',
    );
    assertEquals((await capped.json()).claimed, 2);
    const rest = await post(fn.base, { authorization: `Bearer ${secret}` }, '{"stop_when_idle": true}');
    assertEquals((await rest.json()).claimed, 1);
    await receiver.waitFor(4);
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([fn.close(), unconfigured.close(), receiver.close()]);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
