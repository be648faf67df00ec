// An independent review of the inbound receivers (replays, unverified input, crowding out), performed as
// a retrying provider, an attacker and Razorpay's own documentation would: variants the first tests did
// not try.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import { createSubscription, deliver, donationsOf, logRows, paymentTenant } from "./helpers/payments.ts";
import { paymentSample, refundSample, subscriptionSample } from "./helpers/razorpay_samples.ts";
import { change, createAccount, newPhone, signedPost, textMessage, webhookBody } from "./helpers/whatsapp.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp as checkoutApp } from "../supabase/functions/checkout-webhook/app.ts";
import { createApp as paymentsApp } from "../supabase/functions/payments-webhook/app.ts";
import { createApp as messagingApp } from "../supabase/functions/messaging-webhook/app.ts";

const appSql = createSql(testDbUrl(), { max: 6 });
const deps = { sql: appSql, config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }) };
const checkout = await serveFunction("checkout-webhook", checkoutApp(deps));
const payments = await serveFunction("payments-webhook", paymentsApp(deps));
const messaging = await serveFunction("messaging-webhook", messagingApp(deps));
const rz = (secret: string, eventId: string) => ({
  secret,
  header: "x-razorpay-signature",
  headers: { "x-razorpay-event-id": eventId } as Record<string, string>,
});
const t0 = Math.floor(Date.UTC(2026, 10, 23, 8, 0) / 1000);
const id = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 14)}`;

/** Razorpay's documented payment.downtime.* sample (Payments webhook events page, "Payments Downtime"). */
function downtimeSample(event: string, at: number) {
  return {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event,
    contains: ["payment.downtime"],
    payload: {
      "payment.downtime": {
        entity: {
          id: id("down"),
          entity: "payment.downtime",
          method: "upi",
          begin: at,
          end: event.endsWith("resolved") ? at + 600 : null,
          status: event.split(".")[2],
          scheduled: false,
          severity: "high",
          instrument: { vpa_handle: "ybl" },
          created_at: at,
          updated_at: at,
        },
      },
    },
    created_at: at,
  };
}

Deno.test("review: Razorpay's documented payment.downtime.* samples are accepted once verified, not retried for a day", async () => {
  const t = await paymentTenant();
  const url = `${payments.base}/${t.organizationId}`;
  for (const event of ["payment.downtime.started", "payment.downtime.updated", "payment.downtime.resolved"]) {
    const res = await deliver(url, downtimeSample(event, t0), rz(t.secret, id("evt")));
    assertEquals([res.status, res.json?.outcome], [200, "ignored"], `${event}: ${JSON.stringify(res.json)}`);
  }
  // Logged, visible to the admin as what they are.
  const log = await logRows(t.organizationId);
  assertEquals(log.map((l) => [l.event, l.status]), [
    ["payment.downtime.started", "processed"],
    ["payment.downtime.updated", "processed"],
    ["payment.downtime.resolved", "processed"],
  ]);
  // An unsigned one is still refused.
  assertEquals((await deliver(url, downtimeSample("payment.downtime.started", t0 + 1))).status, 401);
});

Deno.test("review: a verified Razorpay event the checkout receiver has no use for (invoice.paid) is acknowledged", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const body = {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event: "invoice.paid",
    contains: ["invoice", "payment"],
    payload: {
      invoice: {
        entity: { id: id("inv"), entity: "invoice", subscription_id: sub.gatewayId, status: "paid" },
      },
      payment: { entity: { id: id("pay"), entity: "payment", amount: 50000, currency: "INR" } },
    },
    created_at: t0,
  };
  const res = await deliver(`${checkout.base}/${t.organizationId}`, body, rz(t.secret, id("evt")));
  assertEquals([res.status, res.json?.outcome], [200, "ignored"], JSON.stringify(res.json));
  // A neutral-shape event name nobody defined is still the sender's error.
  const neutral = await deliver(`${checkout.base}/${t.organizationId}`, {
    event: "exploded",
    subscription_id: sub.gatewayId,
    occurred_at: new Date(t0 * 1000).toISOString(),
  }, { secret: t.secret });
  assertEquals([neutral.status, neutral.json.error.code], [400, "unknown_event"]);
});

Deno.test("review 13.2: re-serialized Razorpay refund and charge under new event ids apply once", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const paymentId = id("pay");
  const charge = subscriptionSample("subscription.charged", {
    subscriptionId: sub.gatewayId,
    paymentId,
    at: t0,
  });
  for (
    const [i, text] of [
      JSON.stringify(charge),
      JSON.stringify(charge, null, 1),
      ` ${JSON.stringify(charge)}\n`,
    ].entries()
  ) {
    const res = await deliver(`${checkout.base}/${t.organizationId}`, text, rz(t.secret, `evt_charge_${i}`));
    assertEquals(res.status, 200, JSON.stringify(res.json));
  }
  assertEquals((await donationsOf(t.organizationId)).map((d) => d.gateway_payment_id), [paymentId]);

  const refund = refundSample("refund.processed", {
    subscriptionId: "",
    paymentId,
    refundId: id("rfnd"),
    at: t0 + 60,
    amount: 1000,
  });
  for (
    const [i, text] of [JSON.stringify(refund), JSON.stringify(refund, null, 2), `${JSON.stringify(refund)} `]
      .entries()
  ) {
    const res = await deliver(`${payments.base}/${t.organizationId}`, text, rz(t.secret, `evt_refund_${i}`));
    assertEquals(res.status, 200, JSON.stringify(res.json));
  }
  const [donation] = await donationsOf(t.organizationId);
  assertEquals([donation!.refunded_minor, donation!.refund_status], ["1000", "partial"]);
  // payment.captured of the same payment, re-serialized: still one donation.
  const captured = paymentSample("payment.captured", { subscriptionId: "", paymentId, at: t0 });
  const again = await deliver(
    `${payments.base}/${t.organizationId}`,
    JSON.stringify(captured, null, 3),
    rz(t.secret, id("evt")),
  );
  assertEquals(again.status, 200);
  assertEquals((await donationsOf(t.organizationId)).length, 1);
});

Deno.test("review 13.3: a forged delivery naming an organization id that does not exist is 404 and leaves nothing", async () => {
  const before = await refusedTotals();
  for (const base of [checkout.base, payments.base]) {
    for (let i = 0; i < 20; i++) {
      const res = await deliver(`${base}/${crypto.randomUUID()}`, {
        event: "refund.processed — ATTENTION ADMIN",
        padding: "x".repeat(10_000),
      }, {
        secret: "whsec_guess",
        header: base === checkout.base ? "x-checkout-signature" : "x-payments-signature",
      });
      assertEquals(res.status, 404);
    }
  }
  const after = await refusedTotals();
  assertEquals(after.deliveries - before.deliveries, 0, "no refused delivery counted against nobody");
});

async function refusedTotals() {
  const [r] = await sql()<{ deliveries: number }[]>`
    select coalesce(sum(deliveries), 0)::int as deliveries from public.inbound_webhook_log
    where organization_id is null and provider in ('checkout', 'payments') and status = 'unverified'`;
  return r!;
}

Deno.test("review 13.3: a flood of unsigned requests across many organizations adds one small row per organization", async () => {
  const tenants = await Promise.all(Array.from({ length: 25 }, () => paymentTenant()));
  const padding = "p".repeat(50_000);
  await Promise.all(tenants.map(async (t) => {
    for (let i = 0; i < 4; i++) {
      const res = await deliver(`${payments.base}/${t.organizationId}`, { event: `forged ${i}`, padding }, {
        headers: { "user-agent": "ATTENTION ADMIN" },
      });
      assertEquals(res.status, 401);
    }
  }));
  const rows = await sql()<{ n: number; bytes: number; deliveries: number; text: number }[]>`
    select count(*)::int as n, sum(body_bytes)::int as bytes, sum(deliveries)::int as deliveries,
           sum(octet_length(coalesce(payload::text, '') || coalesce(raw_body, '') || coalesce(event, '')
                            || headers::text))::int as text
    from public.inbound_webhook_log where organization_id = any(${
    tenants.map((t) => t.organizationId)
  }::uuid[])`;
  assertEquals([rows[0]!.n, rows[0]!.deliveries], [25, 100]);
  assert(rows[0]!.bytes > 100 * 50_000, "sizes are counted");
  assertEquals(rows[0]!.text, 25 * 2, "nothing the sender chose is kept ('{}' headers only)");
});

Deno.test("review: a WhatsApp body mixing a known and an unknown account needs the known account's signature", async () => {
  const t = await createTenant();
  const account = await createAccount(t.organizationId);
  const stranger = { ...account, phoneNumberId: `unknown-${crypto.randomUUID().slice(0, 8)}` };
  const phone = newPhone();
  const body = webhookBody(
    [change(account, { messages: [textMessage(phone, "mine")] })],
    [change(stranger, { messages: [textMessage(phone, "someone else's")] })],
  );
  // Unsigned, or signed with a guess: refused although most of it names nobody we know.
  for (const secret of [null, "guess"]) {
    const res = await signedPost(messaging.base, body, secret);
    assertEquals(res.status, 401);
    await res.body?.cancel();
  }
  const stored = () =>
    sql()<
      { text: string }[]
    >`select text from public.whatsapp_messages where organization_id = ${t.organizationId}`;
  assertEquals((await stored()).length, 0);
  const ok = await signedPost(messaging.base, body, account.appSecret);
  const json = await ok.json();
  assertEquals([ok.status, json.skipped_phone_number_ids, json.messages.stored], [200, 1, 1]);
  assertEquals((await stored()).map((m) => m.text), ["mine"]);
  // The organization's log holds only its own account's part.
  const log = await logRows(t.organizationId);
  const verified = log.filter((l) => l.signature_valid);
  assertEquals(verified.length, 1);
  assert(!JSON.stringify(verified[0]!.payload).includes("someone else's"));
});

Deno.test("review: the replay endpoint never accepts the service-role key or a guessable secret", async () => {
  const t = await createTenant();
  const serviceKey = `eyJ-service-role-${crypto.randomUUID()}`;
  const cases: [Record<string, string>, string, number][] = [
    // An operator who reuses the service-role key as the replay secret gets no replay, not an open door.
    [{ INBOUND_REPLAY_SECRET: serviceKey, SUPABASE_SERVICE_ROLE_KEY: serviceKey }, serviceKey, 503],
    [{ INBOUND_REPLAY_SECRET: "short-secret" }, "short-secret", 503],
    [
      { INBOUND_REPLAY_SECRET: `replay-${crypto.randomUUID()}`, SUPABASE_SERVICE_ROLE_KEY: serviceKey },
      serviceKey,
      401,
    ],
  ];
  for (const [env, bearer, expected] of cases) {
    const config = loadConfig({ SUPABASE_DB_URL: testDbUrl(), ...env });
    const server = await serveFunction("checkout-webhook", checkoutApp({ sql: appSql, config }));
    try {
      const res = await fetch(`${server.base}/replay`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ organization_id: t.organizationId }),
      });
      assertEquals(res.status, expected, JSON.stringify(env));
      await res.body?.cancel();
    } finally {
      await server.close();
    }
  }
});

Deno.test("close", async () => {
  await Promise.all([checkout.close(), payments.close(), messaging.close()]);
  await appSql.end({ timeout: 5 });
  await closeSql();
});
