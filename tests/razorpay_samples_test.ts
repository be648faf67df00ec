// Razorpay's documented sample payloads for every subscription, payment and refund event, signed with
// x-razorpay-signature and delivered to the receiver that handles them: all accepted once verified
// (liberal in what is accepted), each with the effect its event means.
import { assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import {
  createSubscription,
  deliver,
  donationsOf,
  paymentTenant,
  subscriptionRow,
} from "./helpers/payments.ts";
import {
  activatedUpfrontSample,
  PAYMENT_EVENTS,
  paymentSample,
  REFUND_EVENTS,
  refundSample,
  SUBSCRIPTION_EVENTS,
  subscriptionSample,
} from "./helpers/razorpay_samples.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp as checkoutApp } from "../supabase/functions/checkout-webhook/app.ts";
import { createApp as paymentsApp } from "../supabase/functions/payments-webhook/app.ts";

const appSql = createSql(testDbUrl(), { max: 4 });
const deps = { sql: appSql, config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }) };
const checkout = await serveFunction("checkout-webhook", checkoutApp(deps));
const payments = await serveFunction("payments-webhook", paymentsApp(deps));
const rz = (secret: string) => ({ secret, header: "x-razorpay-signature" });
const t0 = Math.floor(Date.UTC(2026, 10, 23, 8, 0) / 1000);
const id = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 14)}`;

Deno.test("every documented subscription sample is accepted and moves the subscription as it says", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const url = `${checkout.base}/${t.organizationId}`;
  const steps: [string, string, number][] = [
    ["subscription.authenticated", "authenticated", 0],
    ["subscription.activated (upfront)", "active", 0],
    ["subscription.charged", "active", 0],
    ["subscription.pending", "past_due", 1],
    ["subscription.halted", "halted", 1],
    ["subscription.activated", "active", 1],
    ["subscription.paused", "paused", 1],
    ["subscription.resumed", "active", 1],
    ["subscription.updated", "active", 1],
    ["subscription.cancelled", "cancelled", 1],
  ];
  const seen = new Set<string>();
  for (const [i, [event, status, failures]] of steps.entries()) {
    const ids = { subscriptionId: sub.gatewayId, paymentId: id("pay"), at: t0 + i * 60 };
    const body = event.endsWith("(upfront)") ? activatedUpfrontSample(ids) : subscriptionSample(event, ids);
    seen.add(body.event);
    const res = await deliver(url, body, rz(t.secret));
    assertEquals(res.status, 200, `${event}: ${JSON.stringify(res.json)}`);
    const row = await subscriptionRow(sub.id);
    assertEquals([row.status, row.failure_count], [status, failures], event);
  }
  // The upfront sample's time came from inside its payload.
  const [logged] = await sql()<{ result: { outcome: string } }[]>`
    select result from public.inbound_webhook_log
    where organization_id = ${t.organizationId} and payload -> 'payload' ? 'created_at'`;
  assertEquals(logged?.result.outcome, "applied");
  assertEquals((await donationsOf(t.organizationId)).length, 1, "the charge recorded one donation");

  // subscription.completed (with its last charge) on another subscription.
  const last = await createSubscription(t.organizationId, { status: "active" });
  const done = await deliver(
    url,
    subscriptionSample("subscription.completed", {
      subscriptionId: last.gatewayId,
      paymentId: id("pay"),
      at: t0,
    }),
    rz(t.secret),
  );
  assertEquals(done.status, 200);
  seen.add("subscription.completed");
  assertEquals((await subscriptionRow(last.id)).status, "completed");
  assertEquals(
    [...seen].sort(),
    [...SUBSCRIPTION_EVENTS].sort(),
    "every documented subscription event was sent",
  );
});

Deno.test("every documented payment and refund sample is accepted", async () => {
  const t = await paymentTenant();
  const url = `${payments.base}/${t.organizationId}`;
  const paymentId = id("pay");
  for (const event of PAYMENT_EVENTS) {
    const ids = {
      subscriptionId: "",
      paymentId: event === "payment.captured" ? paymentId : id("pay"),
      at: t0,
    };
    const res = await deliver(url, paymentSample(event, ids), rz(t.secret));
    assertEquals(res.status, 200, `${event}: ${JSON.stringify(res.json)}`);
    assertEquals(res.json.outcome, event === "payment.captured" ? "applied" : "ignored", event);
  }
  assertEquals((await donationsOf(t.organizationId)).map((d) => d.gateway_payment_id), [paymentId]);

  const refundId = id("rfnd");
  const expected: Record<string, string> = {
    "refund.created": "pending",
    "refund.speed_changed": "pending",
    "refund.processed": "processed",
  };
  for (const [i, event] of REFUND_EVENTS.entries()) {
    const failing = event === "refund.failed";
    const ids = {
      subscriptionId: "",
      paymentId,
      refundId: failing ? id("rfnd") : refundId,
      at: t0 + i * 60,
      amount: 1000,
    };
    const res = await deliver(url, refundSample(event, ids), rz(t.secret));
    assertEquals(res.status, 200, `${event}: ${JSON.stringify(res.json)}`);
    const [refund] = await sql()<{ status: string }[]>`
      select status from public.donation_refunds where organization_id = ${t.organizationId} and gateway_refund_id = ${ids.refundId}`;
    assertEquals(refund?.status, failing ? "failed" : expected[event], event);
  }
  const [donation] = await donationsOf(t.organizationId);
  assertEquals([donation!.refunded_minor, donation!.refund_status], ["1000", "partial"]);
});

Deno.test("an envelope without payload answers missing payload (not an unknown event)", async () => {
  const t = await paymentTenant();
  for (
    const [base, event] of [[checkout.base, "subscription.charged"], [payments.base, "refund.processed"]]
  ) {
    const res = await deliver(`${base}/${t.organizationId}`, {
      entity: "event",
      account_id: "acc_BFQ7uQEaa7j2z7",
      event,
      contains: [],
      created_at: t0,
    }, rz(t.secret));
    assertEquals([res.status, res.json.error.code], [400, "missing_payload"], event);
    assertMatch(res.json.error.message, /missing payload/);
  }
});

Deno.test("close", async () => {
  await Promise.all([checkout.close(), payments.close()]);
  await appSql.end({ timeout: 5 });
  await closeSql();
});
