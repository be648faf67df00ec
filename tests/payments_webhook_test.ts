// payments-webhook against a real PostgreSQL over loopback HTTP: refunds (partial, multiple, before the
// payment is known) and captured one-off and recurring payments, neutral and Razorpay shapes.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import {
  createSubscription,
  deliver,
  donationsOf,
  logRows,
  paymentTenant,
  unix,
} from "./helpers/payments.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp, receiver } from "../supabase/functions/payments-webhook/app.ts";
import { replayFailed } from "../supabase/functions/_shared/inbound/replay.ts";

const appSql = createSql(testDbUrl(), { max: 10 });
const server = await serveFunction(
  "payments-webhook",
  createApp({ sql: appSql, config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }) }),
);
const key = () => `evt_${crypto.randomUUID()}`;
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute)).toISOString();
const H = "x-payments-signature";

function captured(id: string, amount: number, extra: Record<string, unknown> = {}) {
  return {
    event: "payment.captured",
    occurred_at: at(0),
    payment: { id, amount_minor: amount, currency: "INR", ...extra },
  };
}
function refund(event: string, id: string, paymentId: string, amount: number, minute = 1) {
  return {
    event,
    occurred_at: at(minute),
    refund: { id, payment_id: paymentId, amount_minor: amount, currency: "INR" },
  };
}
function razorpayRefund(event: string, id: string, paymentId: string, amount: number) {
  return {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event,
    contains: ["refund", "payment"],
    payload: {
      refund: {
        entity: {
          id,
          entity: "refund",
          amount,
          currency: "INR",
          payment_id: paymentId,
          notes: [],
          receipt: null,
          status: event.split(".")[1],
          speed_processed: "normal",
          speed_requested: "normal",
          created_at: unix(at(2)),
        },
      },
      payment: {
        entity: { id: paymentId, entity: "payment", amount: 10000, currency: "INR", status: "refunded" },
      },
    },
    created_at: unix(at(2)),
  };
}
function razorpayCaptured(id: string, amount: number, notes: Record<string, string> | [] = []) {
  return {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event: "payment.captured",
    contains: ["payment"],
    payload: {
      payment: {
        entity: {
          id,
          entity: "payment",
          amount,
          currency: "INR",
          status: "captured",
          order_id: "order_Beg2FvMMrg9uDi",
          invoice_id: null,
          method: "upi",
          amount_refunded: 0,
          captured: true,
          email: "donor@example.org",
          notes,
          created_at: unix(at(0)),
        },
      },
    },
    created_at: unix(at(0)),
  };
}

Deno.test("partial and multiple refunds against one donation, each counted once", async () => {
  const t = await paymentTenant();
  const url = `${server.base}/${t.organizationId}`;
  const send = (body: unknown, k = key()) => deliver(url, body, { secret: t.secret, header: H, key: k });
  assertEquals((await send(captured("pay_r1", 10000))).status, 200);
  let [d] = await donationsOf(t.organizationId);
  assertEquals([d!.source, d!.amount_minor, d!.refunded_minor, d!.refund_status], [
    "online",
    "10000",
    "0",
    "none",
  ]);

  // Created (pending) does not count; processed does.
  assertEquals((await send(refund("refund.created", "rfnd_a", "pay_r1", 3000))).status, 200);
  [d] = await donationsOf(t.organizationId);
  assertEquals([d!.refunded_minor, d!.refund_status], ["0", "none"]);
  assertEquals((await send(refund("refund.processed", "rfnd_a", "pay_r1", 3000, 2))).status, 200);
  [d] = await donationsOf(t.organizationId);
  assertEquals([d!.refunded_minor, d!.refund_status], ["3000", "partial"]);

  // The same refund under a different delivery id, and a late "created": no change.
  assertEquals((await send(refund("refund.processed", "rfnd_a", "pay_r1", 3000, 2))).status, 200);
  assertEquals((await send(refund("refund.created", "rfnd_a", "pay_r1", 3000, 0))).status, 200);
  [d] = await donationsOf(t.organizationId);
  assertEquals(d!.refunded_minor, "3000");

  // Razorpay's speed_changed after processing changes nothing.
  const speed = await deliver(url, razorpayRefund("refund.speed_changed", "rfnd_a", "pay_r1", 3000), {
    secret: t.secret,
    header: "x-razorpay-signature",
    headers: { "x-razorpay-event-id": key() },
  });
  assertEquals(speed.status, 200);
  [d] = await donationsOf(t.organizationId);
  assertEquals(d!.refunded_minor, "3000");

  // A failed refund never counts; a second processed refund completes it.
  await send(refund("refund.failed", "rfnd_b", "pay_r1", 1000, 3));
  await send(razorpayRefund("refund.processed", "rfnd_c", "pay_r1", 7000), key());
  [d] = await donationsOf(t.organizationId);
  assertEquals([d!.refunded_minor, d!.refund_status], ["10000", "refunded"]);
  const refunds = await sql()<{ gateway_refund_id: string; status: string; donation_id: string }[]>`
    select gateway_refund_id, status, donation_id from public.donation_refunds
    where organization_id = ${t.organizationId} order by gateway_refund_id`;
  assertEquals(refunds.map((r) => [r.gateway_refund_id, r.status, r.donation_id]), [
    ["rfnd_a", "processed", d!.id],
    ["rfnd_b", "failed", d!.id],
    ["rfnd_c", "processed", d!.id],
  ]);

  // More refunded than donated is our problem to look at, not to record: 500, logged failed.
  const over = await send(refund("refund.processed", "rfnd_d", "pay_r1", 1, 4));
  assertEquals(over.status, 500);
  [d] = await donationsOf(t.organizationId);
  assertEquals(d!.refunded_minor, "10000");
  const failed = (await logRows(t.organizationId)).filter((l) => l.status === "failed");
  assertEquals(failed.length, 1);
  assert(/exceed/.test(failed[0]!.error!), failed[0]!.error!);
});

Deno.test("a refund before its payment is kept and settled when the payment arrives", async () => {
  const t = await paymentTenant();
  const url = `${server.base}/${t.organizationId}`;
  const early = await deliver(url, razorpayRefund("refund.processed", "rfnd_early", "pay_later", 2500), {
    secret: t.secret,
    header: "x-razorpay-signature",
    headers: { "x-razorpay-event-id": key() },
  });
  assertEquals([early.status, early.json.status], [200, "processed"]);
  const [logged] = await logRows(t.organizationId);
  assertEquals((logged as unknown as { status: string }).status, "processed");
  assertEquals((await donationsOf(t.organizationId)).length, 0);

  const pay = await deliver(url, razorpayCaptured("pay_later", 10000), {
    secret: t.secret,
    header: "x-razorpay-signature",
    headers: { "x-razorpay-event-id": key() },
  });
  assertEquals(pay.status, 200);
  const [d] = await donationsOf(t.organizationId);
  assertEquals([d!.gateway_payment_id, d!.refunded_minor, d!.refund_status], [
    "pay_later",
    "2500",
    "partial",
  ]);
  // Once known, the payment also routes refunds that carry no organization in the URL.
  const routed = await deliver(server.base, refund("refund.processed", "rfnd_second", "pay_later", 500), {
    secret: t.secret,
    header: H,
    key: key(),
  });
  assertEquals(routed.status, 200);
  assertEquals((await donationsOf(t.organizationId))[0]!.refunded_minor, "3000");
});

Deno.test("a payment and its refund applied at the same moment still settle", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  // The payment's transaction stays open while the refund is applied; without serialising the two on
  // the payment id, neither would see the other's row and the refund would never be counted.
  let applied!: () => void;
  let release!: () => void;
  const paymentApplied = new Promise<void>((r) => (applied = r));
  const released = new Promise<void>((r) => (release = r));
  const payment = sql().begin(async (tx) => {
    await tx`select private.apply_payment_event(${org}::uuid,
      ${tx.json({ payment: { id: "pay_race", amount_minor: 1000, currency: "INR" } })})`;
    applied();
    await released;
  });
  await paymentApplied;
  let refundDone = false;
  const refund = sql()`select private.apply_refund_event(${org}::uuid, ${
    sql().json({
      refund: {
        id: "rfnd_race",
        payment_id: "pay_race",
        amount_minor: 400,
        currency: "INR",
        status: "processed",
        occurred_at: at(1),
      },
    })
  })`.finally(() => (refundDone = true));
  // The race happened: the refund is seen waiting for a lock the open payment transaction holds (were
  // it not serialised, it would finish first, and this check fails).
  let waited = false;
  while (!refundDone && !waited) {
    const [w] = await sql()<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where query like '%apply_refund_event%' and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
    waited = w!.n > 0;
    if (!waited) await new Promise((r) => setTimeout(r, 10));
  }
  assert(waited, "the refund waited for the payment's transaction");
  release();
  await Promise.all([payment, refund]);
  const [d] = await donationsOf(org);
  assertEquals([d!.refunded_minor, d!.refund_status], ["400", "partial"]);
});

Deno.test("recurring-payment notifications record the donation once, linked to its recurring donation", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const body = captured("pay_rec1", 50000, { subscription_id: sub.gatewayId });
  const first = await deliver(server.base, body, { secret: t.secret, header: H, key: key() });
  assertEquals(first.status, 200, JSON.stringify(first.json));
  // The same signed bytes under a new key are the same delivery (an inbound replay).
  const second = await deliver(server.base, body, { secret: t.secret, header: H, key: key() });
  assertEquals([second.status, second.json.status], [200, "duplicate"]);
  const rp = await deliver(
    `${server.base}/${t.organizationId}`,
    razorpayCaptured("pay_rec2", 50000, { subscription_id: sub.gatewayId }),
    { secret: t.secret, header: "x-razorpay-signature", headers: { "x-razorpay-event-id": key() } },
  );
  assertEquals(rp.status, 200);
  const donations = await donationsOf(t.organizationId);
  assertEquals(donations.map((d) => [d.gateway_payment_id, d.source, d.recurring_donation_id]), [
    ["pay_rec1", "recurring", sub.id],
    ["pay_rec2", "recurring", sub.id],
  ]);

  // For a subscription we do not know yet: unmatched, replayable once it exists.
  const later = `sub_later_${crypto.randomUUID().slice(0, 8)}`;
  const unmatched = await deliver(
    `${server.base}/${t.organizationId}`,
    captured("pay_rec3", 50000, { subscription_id: later }),
    { secret: t.secret, header: H, key: key() },
  );
  assertEquals([unmatched.status, unmatched.json.status], [202, "unmatched"]);
  const laterSub = await createSubscription(t.organizationId, { id: later });
  assertEquals((await replayFailed(sql(), receiver, t.organizationId)).map((r) => r.status), [
    "processed",
  ]);
  const linked = (await donationsOf(t.organizationId)).find((d) => d.gateway_payment_id === "pay_rec3");
  assertEquals(linked?.recurring_donation_id, laterSub.id);
});

Deno.test("payments: signature, unknown organization, bad input, duplicates", async () => {
  const t = await paymentTenant();
  const other = await paymentTenant();
  const url = `${server.base}/${t.organizationId}`;
  const body = captured("pay_bad", 100);
  assertEquals((await deliver(url, body, { secret: other.secret, header: H, key: key() })).status, 401);
  assertEquals((await deliver(url, body, { key: key() })).status, 401);
  // The checkout header is not the payments header.
  assertEquals(
    (await deliver(url, body, { secret: t.secret, header: "x-checkout-signature", key: key() })).status,
    401,
  );
  const missing = await deliver(`${server.base}/${crypto.randomUUID()}`, body, {
    secret: t.secret,
    header: H,
  });
  assertEquals([missing.status, missing.json], [404, { error: { code: "not_found", message: "Not found" } }]);
  assertEquals((await deliver(url, "[1,", { secret: t.secret, header: H, key: key() })).status, 400);
  assertEquals(
    (await deliver(url, { ...body, event: "payment.exploded" }, { secret: t.secret, header: H, key: key() }))
      .status,
    400,
  );
  assertEquals(
    (await deliver(url, captured("pay_neg", -5), { secret: t.secret, header: H, key: key() })).status,
    400,
  );
  assertEquals((await donationsOf(t.organizationId)).length, 0);
  const statuses = (await logRows(t.organizationId)).map((l) => [l.status, l.deliveries]);
  // One mismatch; two missing (the checkout header is no payments signature).
  assertEquals(statuses, [["unverified", 1], ["unverified", 2], ["rejected", 1], ["rejected", 1], [
    "rejected",
    1,
  ]]);

  const k = key();
  const replies = await Promise.all(
    Array.from(
      { length: 20 },
      () => deliver(url, captured("pay_dup", 100), { secret: t.secret, header: H, key: k }),
    ),
  );
  assert(replies.every((r) => r.status === 200));
  assertEquals(replies.filter((r) => r.json.status === "processed").length, 1);
  assertEquals((await donationsOf(t.organizationId)).length, 1);
});

Deno.test("a separate payments secret, when set, is the only one payments-webhook accepts", async () => {
  const paymentsSecret = `whsec_pay_${crypto.randomUUID()}`;
  const t = await paymentTenant({ paymentsSecret });
  const url = `${server.base}/${t.organizationId}`;
  assertEquals(
    (await deliver(url, captured("pay_s1", 100), { secret: t.secret, header: H, key: key() })).status,
    401,
  );
  assertEquals(
    (await deliver(url, captured("pay_s1", 100), { secret: paymentsSecret, header: H, key: key() })).status,
    200,
  );
});

Deno.test("close pools", async () => {
  await server.close();
  await appSql.end();
  await closeSql();
});
