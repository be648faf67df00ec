// Tenancy attack suite over HTTP (the pgTAP matrix in supabase/tests/03_tenancy_matrix.test.sql covers
// the tables): organization B attacks organization A through every inbound endpoint, through every
// configuration API route for API keys, and through the events feed. Counted: requests, attacks that changed A's data ("breached")
// and responses that showed A's data ("leaked"); both must be 0.
import { assert, assertEquals } from "../helpers/assert.ts";
import { closeSql, createUser, sql } from "../helpers/db.ts";
import { serveFunction } from "../helpers/server.ts";
import { testConfig, tokenFor } from "../helpers/tokens.ts";
import {
  createSubscription,
  deliver,
  paymentTenant,
  razorpaySubscriptionEvent,
} from "../helpers/payments.ts";
import { change, createAccount, signedPost, textMessage, webhookBody } from "../helpers/whatsapp.ts";
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { createApp as webhooksApp, routes } from "../../supabase/functions/webhooks/app.ts";
import { serveInbound } from "./harness.ts";

const inbound = await serveInbound();
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 12, minute)).toISOString();
const key = () => `evt_${crypto.randomUUID()}`;
let requests = 0;
const count = <T>(p: Promise<T>) => (requests++, p);

/** A's domain rows, as a digest: what an attack must never change. */
async function stateOf(organizationId: string): Promise<string> {
  const [row] = await sql()<{ digest: string }[]>`
    select md5(concat_ws('|',
      (select string_agg(to_jsonb(r)::text, ',' order by id) from public.recurring_donations r
        where organization_id = ${organizationId}),
      (select string_agg(to_jsonb(d)::text, ',' order by id) from public.donations d
        where organization_id = ${organizationId}),
      (select string_agg(to_jsonb(f)::text, ',' order by id) from public.donation_refunds f
        where organization_id = ${organizationId}),
      (select count(*)::text from public.whatsapp_messages where organization_id = ${organizationId}),
      (select count(*)::text from public.whatsapp_conversations where organization_id = ${organizationId}),
      -- Using a key records its last use: not a change an attacker makes.
      (select string_agg((to_jsonb(k) - 'last_used_at')::text, ',' order by id) from public.organization_api_keys k
        where organization_id = ${organizationId}))) as digest`;
  return row!.digest;
}

Deno.test("inbound endpoints: B's secret never writes into A, a payload naming A's objects never reaches them from B", async () => {
  const a = await paymentTenant();
  const b = await paymentTenant();
  const subA = await createSubscription(a.organizationId, { status: "active" });
  // A has a payment (for refund attacks).
  const paid = await deliver(`${inbound.payments}/${a.organizationId}`, {
    event: "payment.captured",
    occurred_at: at(0),
    payment: { id: `pay_a_${crypto.randomUUID().slice(0, 8)}`, amount_minor: 10000, currency: "INR" },
  }, { secret: a.secret, header: "x-payments-signature", key: key() });
  assertEquals(paid.status, 200);
  const [paidRow] = await sql()<{ gateway_payment_id: string }[]>`
    select gateway_payment_id from public.donations where organization_id = ${a.organizationId}`;
  const payA = paidRow!.gateway_payment_id;
  const accountA = await createAccount(a.organizationId);
  const accountB = await createAccount(b.organizationId);
  const before = await stateOf(a.organizationId);

  const cancelA = { event: "cancelled", subscription_id: subA.gatewayId, occurred_at: at(5) };
  const chargeA = {
    event: "charged",
    subscription_id: subA.gatewayId,
    occurred_at: at(6),
    payment: { id: `pay_attack_${crypto.randomUUID().slice(0, 8)}`, amount_minor: 1, currency: "INR" },
  };
  const refundA = {
    event: "refund.processed",
    occurred_at: at(7),
    refund: {
      id: `rfnd_${crypto.randomUUID().slice(0, 8)}`,
      payment_id: payA,
      amount_minor: 10000,
      currency: "INR",
    },
  };
  const outcomes: [string, number][] = [];
  const attempt = async (name: string, p: Promise<{ status: number }>) => {
    outcomes.push([name, (await count(p)).status]);
  };
  const H = { header: "x-checkout-signature" };
  const P = { header: "x-payments-signature" };

  // B's secret on A's URL.
  await attempt(
    "checkout: B signs for A's URL",
    deliver(`${inbound.checkout}/${a.organizationId}`, cancelA, { secret: b.secret, ...H, key: key() }),
  );
  await attempt(
    "payments: B signs a refund for A's URL",
    deliver(`${inbound.payments}/${a.organizationId}`, refundA, { secret: b.secret, ...P, key: key() }),
  );
  // A's subscription or payment named in a payload B signs, routed by the payload.
  await attempt(
    "checkout: A's subscription, B's secret, no URL org",
    deliver(inbound.checkout, cancelA, { secret: b.secret, ...H, key: key() }),
  );
  await attempt(
    "checkout: A's subscription in Razorpay shape, B's secret",
    deliver(
      inbound.checkout,
      razorpaySubscriptionEvent("subscription.cancelled", subA.gatewayId, at(5), {
        notes: { organization_id: a.organizationId },
      }),
      { secret: b.secret, header: "x-razorpay-signature", headers: { "x-razorpay-event-id": key() } },
    ),
  );
  await attempt(
    "payments: A's payment refunded, B's secret, no URL org",
    deliver(inbound.payments, refundA, { secret: b.secret, ...P, key: key() }),
  );
  await attempt(
    "payments: organization_id A in the body, B's secret",
    deliver(inbound.payments, { ...refundA, organization_id: a.organizationId }, {
      secret: b.secret,
      ...P,
      key: key(),
    }),
  );
  // B's own URL and secret, payload naming A's objects: applied in B's world only (unmatched there).
  await attempt(
    "checkout: A's subscription sent to B's URL signed by B",
    deliver(`${inbound.checkout}/${b.organizationId}`, cancelA, { secret: b.secret, ...H, key: key() }),
  );
  await attempt(
    "checkout: charge for A's subscription to B's URL",
    deliver(`${inbound.checkout}/${b.organizationId}`, chargeA, { secret: b.secret, ...H, key: key() }),
  );
  await attempt(
    "payments: refund of A's payment to B's URL",
    deliver(`${inbound.payments}/${b.organizationId}`, refundA, { secret: b.secret, ...P, key: key() }),
  );
  await attempt(
    "payments: B's payment claiming A's subscription",
    deliver(`${inbound.payments}/${b.organizationId}`, {
      event: "payment.captured",
      occurred_at: at(8),
      payment: {
        id: `pay_b_${crypto.randomUUID().slice(0, 8)}`,
        amount_minor: 5,
        currency: "INR",
        subscription_id: subA.gatewayId,
      },
    }, { secret: b.secret, ...P, key: key() }),
  );
  // Messaging: B's app secret over a body for A's phone number id, alone or mixed with B's own.
  const forA = webhookBody([change(accountA, { messages: [textMessage("15550002222", "hi from B")] })]);
  await attempt(
    "messaging: body for A's number signed with B's secret",
    signedPost(inbound.messaging, forA, accountB.appSecret),
  );
  const mixed = webhookBody([
    change(accountB, { messages: [textMessage("15550003333", "b")] }),
    change(accountA, { messages: [textMessage("15550002222", "a")] }),
  ]);
  await attempt(
    "messaging: A's and B's numbers in one body, B's secret",
    signedPost(inbound.messaging, mixed, accountB.appSecret),
  );

  const after = await stateOf(a.organizationId);
  const breached = before === after ? 0 : 1;
  console.log(`tenancy-http inbound: ${JSON.stringify({ requests: outcomes.length, breached, outcomes })}`);
  assertEquals(after, before, "nothing of A changed");
  for (const [name, status] of outcomes) {
    assert(status < 500, `${name}: ${status}`);
    // A body naming A's and B's numbers signed by B is B's own part (applied to B); A's is skipped.
    const expected = name.includes("A's and B's numbers") ? 200 : 401;
    if (name.includes("B's secret") || name.includes("B signs")) assertEquals(status, expected, name);
  }
  // B's own attempts left B with no donation linked to A's subscription.
  const [linkedRow] = await sql()<{ linked: number }[]>`
    select count(*)::int as linked from public.donations
    where organization_id = ${b.organizationId} and recurring_donation_id = ${subA.id}`;
  assertEquals(linkedRow!.linked, 0);
});

Deno.test("configuration API (API keys): every route as other-org admin, forged claim, removed member, staff, anon, other-org and own API key", async () => {
  const config = await testConfig();
  const appSql = createSql(config.dbUrl, { max: 4 });
  const userSql = createSql(config.userDbUrl, { max: 4 });
  const deps = { config, sql: appSql, userSql };
  const api = await serveFunction("webhooks", webhooksApp(deps));
  try {
    const a = await paymentTenant();
    const b = await paymentTenant();
    const json = (token: string) => ({
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
    });
    const adminA = await tokenFor(a.admin, a.organizationId);
    const adminB = await tokenFor(b.admin, b.organizationId);
    const mk = async (token: string, name: string) =>
      await (await fetch(`${api.base}/api-keys`, {
        method: "POST",
        headers: json(token),
        body: JSON.stringify({ name }),
      }))
        .json();
    const keyA = await mk(adminA, "A's automation");
    const keyB = await mk(adminB, "B's automation");
    assert(keyA.key && keyB.key, "keys created");

    const removed = await createUser();
    await sql()`insert into public.profiles (user_id, organization_id, role) values (${removed.id}, ${a.organizationId}, 'admin')`;
    const removedToken = await tokenFor(removed, a.organizationId);
    await sql()`delete from public.profiles where user_id = ${removed.id}`;

    const actors: { name: string; headers: Record<string, string>; allowed: number[] }[] = [
      { name: "anon", headers: { "content-type": "application/json" }, allowed: [401] },
      { name: "garbage token", headers: json("not-a-jwt"), allowed: [401] },
      { name: "removed admin of A", headers: json(removedToken), allowed: [403] },
      { name: "staff of A", headers: json(await tokenFor(a.staff, a.organizationId)), allowed: [403] },
      {
        name: "B's admin claiming A",
        headers: json(await tokenFor(b.admin, a.organizationId)),
        allowed: [403],
      },
      {
        name: "B's API key",
        headers: { "x-api-key": keyB.key, "content-type": "application/json" },
        allowed: [403],
      },
      {
        name: "A's API key",
        headers: { "x-api-key": keyA.key, "content-type": "application/json" },
        allowed: [403],
      },
      // B's admin acts in B: allowed to use the routes, never to see or touch A's keys.
      { name: "B's admin", headers: json(adminB), allowed: [200, 201, 404] },
    ];
    const keyRoutes = routes(deps).filter((r) => r.spec.path.startsWith("/api-keys"));
    assert(keyRoutes.length >= 3, "list, create, revoke");

    const before = await stateOf(a.organizationId);
    const secretsOfA = [keyA.id, keyA.key_prefix, keyA.key, "A's automation", a.organizationId];
    let leaked = 0;
    const wrong: string[] = [];
    for (const r of keyRoutes) {
      const path = r.spec.path.replace(":id", keyA.id);
      for (const actor of actors) {
        const method = r.spec.method.toUpperCase();
        const res = await count(fetch(`${api.base}${path}`, {
          method,
          headers: actor.headers,
          body: method === "POST" || method === "PATCH" || method === "PUT"
            ? JSON.stringify({ name: "attack" })
            : undefined,
        }));
        const text = await res.text();
        if (secretsOfA.some((s) => text.includes(s))) {
          leaked++;
          wrong.push(`${actor.name} ${method} ${path}: response shows A's data`);
        }
        if (!actor.allowed.includes(res.status)) wrong.push(`${actor.name} ${method} ${path}: ${res.status}`);
        if (res.status >= 400) {
          const code = JSON.parse(text)?.error?.code;
          if (typeof code !== "string") wrong.push(`${actor.name} ${method} ${path}: no error code`);
        }
      }
    }
    const after = await stateOf(a.organizationId);
    const breached = before === after ? 0 : 1;
    console.log(
      `tenancy-http api-keys: ${
        JSON.stringify({ routes: keyRoutes.length, actors: actors.length, leaked, breached })
      }`,
    );
    assertEquals(wrong, []);
    assertEquals([leaked, breached], [0, 0]);
    // A's key is still live.
    const [row] = await sql()`select revoked_at from public.organization_api_keys where id = ${keyA.id}`;
    assertEquals(row!.revoked_at, null);
  } finally {
    await api.close();
    await Promise.all([appSql.end(), userSql.end()]);
  }
});

Deno.test("configuration API (events feed): A's events as other-org admin and key, forged claim, removed member, staff, anon", async () => {
  const config = await testConfig();
  const appSql = createSql(config.dbUrl, { max: 4 });
  const userSql = createSql(config.userDbUrl, { max: 4 });
  const deps = { config, sql: appSql, userSql };
  const api = await serveFunction("webhooks", webhooksApp(deps));
  try {
    const a = await paymentTenant();
    const b = await paymentTenant();
    const json = (token: string) => ({ authorization: `Bearer ${token}` });
    const adminB = await tokenFor(b.admin, b.organizationId);
    const keyB = (await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: { ...json(adminB), "content-type": "application/json" },
      body: JSON.stringify({ name: "B's poller" }),
    })).json()).key as string;
    // A has an event (an endpoint subscribes, so the outbox stores it); B has one of its own.
    for (const t of [a, b]) {
      await sql()`insert into public.webhook_endpoints (organization_id, url, events)
                  values (${t.organizationId}, 'https://hooks.example.org/feed', array['member.created'])`;
      await sql()`insert into public.members (organization_id, first_name) values (${t.organizationId}, 'FeedSecret')`;
    }
    const [eventA] = await sql()<{ id: string }[]>`
      select id from public.webhook_events where organization_id = ${a.organizationId}`;
    const removed = await createUser();
    await sql()`insert into public.profiles (user_id, organization_id, role) values (${removed.id}, ${a.organizationId}, 'admin')`;
    const removedToken = await tokenFor(removed, a.organizationId);
    await sql()`delete from public.profiles where user_id = ${removed.id}`;
    const actors: { name: string; headers: Record<string, string>; allowed: number[] }[] = [
      { name: "anon", headers: {}, allowed: [401] },
      { name: "removed admin of A", headers: json(removedToken), allowed: [403] },
      { name: "staff of A", headers: json(await tokenFor(a.staff, a.organizationId)), allowed: [403] },
      {
        name: "B's admin claiming A",
        headers: json(await tokenFor(b.admin, a.organizationId)),
        allowed: [403],
      },
      { name: "B's API key", headers: { "x-api-key": keyB }, allowed: [200, 404] },
      { name: "B's admin", headers: json(adminB), allowed: [200, 404] },
    ];
    const feedRoutes = routes(deps).filter((r) => r.spec.path.startsWith("/events"));
    assertEquals(feedRoutes.length, 2, "list and one");
    let leaked = 0;
    const wrong: string[] = [];
    for (const r of feedRoutes) {
      const path = r.spec.path.replace(":id", eventA!.id);
      for (const actor of actors) {
        const res = await count(fetch(`${api.base}${path}`, { headers: actor.headers }));
        const text = await res.text();
        if (text.includes(eventA!.id) || text.includes(a.organizationId)) {
          leaked++;
          wrong.push(`${actor.name} GET ${path}: response shows A's event`);
        }
        if (!actor.allowed.includes(res.status)) wrong.push(`${actor.name} GET ${path}: ${res.status}`);
        if (res.status === 200 && path === "/events") {
          assert(JSON.parse(text).data.length === 1, `${actor.name} sees B's own event only`);
        }
      }
    }
    console.log(
      `tenancy-http events: ${JSON.stringify({ routes: feedRoutes.length, actors: actors.length, leaked })}`,
    );
    assertEquals(wrong, []);
    assertEquals(leaked, 0);
  } finally {
    await api.close();
    await Promise.all([appSql.end(), userSql.end()]);
  }
});

Deno.test("tenancy HTTP cleanup", async () => {
  console.log(`tenancy-http: ${requests} requests`);
  await inbound.close();
  await closeSql();
});
