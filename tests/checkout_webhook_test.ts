// checkout-webhook against a real PostgreSQL over loopback HTTP: the provider is played by signed and
// mis-signed requests in the neutral and Razorpay shapes.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { asConfigApi, asUser, closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import {
  createSubscription,
  deliver,
  donationsOf,
  logRows,
  paymentTenant,
  razorpaySubscriptionEvent,
  subscriptionRow,
} from "./helpers/payments.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp, receiver } from "../supabase/functions/checkout-webhook/app.ts";
import { replayFailed, replayLogged } from "../supabase/functions/_shared/inbound/replay.ts";

const appSql = createSql(testDbUrl(), { max: 10 });
const server = await serveFunction(
  "checkout-webhook",
  createApp({ sql: appSql, config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }) }),
);
const key = () => `evt_${crypto.randomUUID()}`;
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 9, minute)).toISOString();

Deno.test("neutral events move the subscription through its states and a charge records one donation", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const url = `${server.base}/${t.organizationId}`;
  const send = (event: string, minute: number, extra: Record<string, unknown> = {}) =>
    deliver(url, { event, subscription_id: sub.gatewayId, occurred_at: at(minute), ...extra }, {
      secret: t.secret,
      key: key(),
    });

  assertEquals((await send("created", 0)).status, 200);
  assertEquals((await subscriptionRow(sub.id)).status, "pending");

  const charged = await send("charged", 1, {
    payment: { id: "pay_n1", amount_minor: 50000, currency: "inr" },
  });
  assertEquals(charged.status, 200);
  assertEquals(charged.json.status, "processed");
  assertMatch(charged.json.log_id, /^[0-9a-f-]{36}$/);
  assertEquals((await subscriptionRow(sub.id)).status, "active");

  assertEquals((await send("payment_failed", 2)).status, 200);
  let row = await subscriptionRow(sub.id);
  assertEquals([row.status, row.failure_count], ["past_due", 1]);

  assertEquals(
    (await send("charged", 3, { payment: { id: "pay_n2", amount_minor: 50000, currency: "INR" } })).status,
    200,
  );
  row = await subscriptionRow(sub.id);
  assertEquals([row.status, row.failure_count], ["active", 0]);

  assertEquals((await send("paused", 4)).status, 200);
  assertEquals((await subscriptionRow(sub.id)).status, "paused");
  assertEquals((await send("cancelled", 5)).status, 200);
  assertEquals((await subscriptionRow(sub.id)).status, "cancelled");

  const donations = await donationsOf(t.organizationId);
  assertEquals(
    donations.map((
      d,
    ) => [d.gateway_payment_id, d.amount_minor, d.currency, d.source, d.recurring_donation_id]),
    [
      ["pay_n1", "50000", "INR", "recurring", sub.id],
      ["pay_n2", "50000", "INR", "recurring", sub.id],
    ],
  );
  const log = await logRows(t.organizationId);
  assertEquals(log.length, 6);
  assert(log.every((l) => l.status === "processed" && l.signature_valid === true && l.attempts === 1));
  assertEquals(log.map((l) => l.event), [
    "created",
    "charged",
    "payment_failed",
    "charged",
    "paused",
    "cancelled",
  ]);
});

Deno.test("Razorpay subscription webhooks: x-razorpay-signature, x-razorpay-event-id, organization found without a URL segment", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const rp = (event: string, minute: number, eventId: string, opts = {}) =>
    deliver(server.base, razorpaySubscriptionEvent(event, sub.gatewayId, at(minute), opts), {
      secret: t.secret,
      header: "x-razorpay-signature",
      headers: { "x-razorpay-event-id": eventId },
    });
  const expect: [string, string][] = [
    ["subscription.authenticated", "authenticated"],
    ["subscription.activated", "active"],
    ["subscription.charged", "active"],
    ["subscription.pending", "past_due"],
    ["subscription.halted", "halted"],
    ["subscription.resumed", "active"],
    ["subscription.paused", "paused"],
    ["subscription.completed", "completed"],
  ];
  let minute = 0;
  for (const [event, status] of expect) {
    const opts = event === "subscription.charged" ? { payment: { id: "pay_Rz1", amount: 29900 } } : {};
    const res = await rp(event, minute++, `evt_${event}_${sub.id}`, opts);
    assertEquals(res.status, 200, `${event}: ${JSON.stringify(res.json)}`);
    assertEquals((await subscriptionRow(sub.id)).status, status, event);
  }
  // The same event id again is a duplicate; a different one for the same payment still records it once.
  const again = await rp("subscription.charged", 2, `evt_subscription.charged_${sub.id}`, {
    payment: { id: "pay_Rz1", amount: 29900 },
  });
  assertEquals([again.status, again.json.status], [200, "duplicate"]);
  // The same signed bytes under another event id are the same delivery (an inbound replay).
  const sameBytes = await rp("subscription.charged", 2, `evt_other_${sub.id}`, {
    payment: { id: "pay_Rz1", amount: 29900 },
  });
  assertEquals([sameBytes.status, sameBytes.json.status], [200, "duplicate"]);
  const other = await rp("subscription.charged", 1, `evt_other_${sub.id}`, {
    payment: { id: "pay_Rz1", amount: 29900 },
  });
  assertEquals([other.status, other.json.outcome], [200, "stale"]);
  const donations = await donationsOf(t.organizationId);
  assertEquals(donations.map((d) => [d.gateway_payment_id, d.amount_minor]), [["pay_Rz1", "29900"]]);
  const log = await logRows(t.organizationId);
  assertEquals(
    log.find((l) => l.event === "subscription.pending")?.idempotency_key,
    `evt_subscription.pending_${sub.id}`,
  );

  // notes.organization_id routes a payload for a subscription this organization does not know yet.
  const unknownSub = razorpaySubscriptionEvent("subscription.activated", "sub_NotYetKnown", at(1), {
    notes: { organization_id: t.organizationId },
  });
  const unmatched = await deliver(server.base, unknownSub, {
    secret: t.secret,
    header: "x-razorpay-signature",
    headers: { "x-razorpay-event-id": key() },
  });
  assertEquals([unmatched.status, unmatched.json.status], [202, "unmatched"]);
});

Deno.test("late older events never move a subscription backwards; cancelled is final", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const url = `${server.base}/${t.organizationId}`;
  const send = (event: string, minute: number, extra: Record<string, unknown> = {}) =>
    deliver(url, { event, subscription_id: sub.gatewayId, occurred_at: at(minute), ...extra }, {
      secret: t.secret,
      key: key(),
    });
  await send("charged", 10, { payment: { id: "pay_late1", amount_minor: 100, currency: "INR" } });
  // Older than the charge: logged and processed as stale, state untouched, failure not counted.
  const late = await send("payment_failed", 5);
  assertEquals([late.status, late.json.outcome], [200, "stale"]);
  // "created" with the very same time as the charge still cannot undo "active".
  assertEquals((await send("created", 10)).json.outcome, "stale");
  let row = await subscriptionRow(sub.id);
  assertEquals([row.status, row.failure_count], ["active", 0]);
  assertEquals(row.last_event_at?.toISOString(), at(10));
  // A late charge still records its money, without moving the state.
  const lateCharge = await send("charged", 7, {
    payment: { id: "pay_late0", amount_minor: 100, currency: "INR" },
  });
  assertEquals([lateCharge.json.outcome, lateCharge.json.status], ["stale", "processed"]);
  assertEquals((await donationsOf(t.organizationId)).length, 2);

  await send("cancelled", 20);
  assertEquals(
    (await send("charged", 30, { payment: { id: "pay_after", amount_minor: 100, currency: "INR" } })).json
      .outcome,
    "stale",
  );
  row = await subscriptionRow(sub.id);
  assertEquals(row.status, "cancelled");
});

Deno.test("wrong or missing signature: 401, logged unverified, nothing applied", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const body = {
    event: "charged",
    subscription_id: sub.gatewayId,
    occurred_at: at(0),
    payment: { id: "pay_x", amount_minor: 5, currency: "INR" },
  };
  const url = `${server.base}/${t.organizationId}`;
  const k = key();
  const wrong = await deliver(url, body, { secret: "not-the-secret", key: k });
  assertEquals(wrong.status, 401);
  assertEquals(wrong.json.error.code, "invalid_signature");
  const missing = await deliver(url, body, { key: k });
  assertEquals(missing.status, 401);
  const overOtherBytes = await deliver(url, body, {
    secret: t.secret,
    key: k,
    signOver: JSON.stringify(body) + " ",
  });
  assertEquals(overOtherBytes.status, 401);
  assertEquals((await subscriptionRow(sub.id)).status, "pending");
  assertEquals((await donationsOf(t.organizationId)).length, 0);
  // Counted per reason, nothing of the bodies kept (unverified input is not stored).
  const log = await logRows(t.organizationId);
  assertEquals(log.map((l) => [l.status, l.signature_valid, l.error, l.deliveries, l.payload, l.raw_body]), [
    ["unverified", false, "signature mismatch", 2, null, null],
    ["unverified", false, "signature missing", 1, null, null],
  ]);
  const big = { ...body, pad: "x".repeat(200 * 1024) };
  assertEquals((await deliver(url, big, { secret: "forged", key: key() })).status, 401);
  assertEquals((await logRows(t.organizationId)).map((l) => l.deliveries), [3, 1]);
  // The forged deliveries did not take the key: the genuine one with it is applied.
  const genuine = await deliver(url, body, { secret: t.secret, key: k });
  assertEquals([genuine.status, genuine.json.status], [200, "processed"]);
  assertEquals((await donationsOf(t.organizationId)).length, 1);
});

Deno.test("tenancy: organization A's secret cannot sign for organization B", async () => {
  const a = await paymentTenant();
  const b = await paymentTenant();
  const subB = await createSubscription(b.organizationId);
  const body = { event: "cancelled", subscription_id: subB.gatewayId, occurred_at: at(0) };
  const viaPath = await deliver(`${server.base}/${b.organizationId}`, body, { secret: a.secret, key: key() });
  assertEquals(viaPath.status, 401);
  const viaLookup = await deliver(server.base, body, { secret: a.secret, key: key() });
  assertEquals(viaLookup.status, 401);
  // A's organization in the URL: A does not know B's subscription, so nothing of B's is touched.
  const viaOwnPath = await deliver(`${server.base}/${a.organizationId}`, body, {
    secret: a.secret,
    key: key(),
  });
  assertEquals(viaOwnPath.status, 202);
  assertEquals((await subscriptionRow(subB.id)).status, "pending");

  // The same subscription id in both organizations: the secret that verifies decides which one moves.
  const shared = `sub_shared_${crypto.randomUUID().slice(0, 8)}`;
  const sa = await createSubscription(a.organizationId, { id: shared });
  const sb = await createSubscription(b.organizationId, { id: shared });
  const res = await deliver(server.base, { event: "paused", subscription_id: shared, occurred_at: at(1) }, {
    secret: b.secret,
    key: key(),
  });
  assertEquals(res.status, 200);
  assertEquals([(await subscriptionRow(sa.id)).status, (await subscriptionRow(sb.id)).status], [
    "pending",
    "paused",
  ]);
});

Deno.test("unknown organization: 404 with nothing that helps guessing, and no log row", async () => {
  const t = await paymentTenant();
  const noSecret = await createTenant();
  const body = { event: "created", subscription_id: "sub_nobody", occurred_at: at(0) };
  const replies = [
    await deliver(`${server.base}/${crypto.randomUUID()}`, body, { secret: t.secret, key: key() }),
    await deliver(`${server.base}/not-a-uuid`, body, { secret: t.secret, key: key() }),
    await deliver(`${server.base}/${noSecret.organizationId}`, body, { secret: t.secret, key: key() }),
    await deliver(server.base, body, { secret: t.secret, key: key() }),
  ];
  for (const r of replies) {
    assertEquals(r.status, 404);
    assertEquals(r.json, { error: { code: "not_found", message: "Not found" } });
  }
  assertEquals((await logRows(noSecret.organizationId)).length, 0);
});

Deno.test("body over 1 MiB: 413 before it is buffered whole, nothing logged", async () => {
  const t = await paymentTenant();
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent > 64 * 1024 * 1024) return controller.close();
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  const res = await fetch(`${server.base}/${t.organizationId}`, {
    method: "POST",
    body: stream,
    headers: { "content-type": "application/json", "x-checkout-signature": "00" },
  });
  assertEquals(res.status, 413);
  assertEquals((await res.json()).error.code, "payload_too_large");
  assert(sent < 16 * 1024 * 1024, `stopped reading early (client sent ${sent} bytes)`);

  const exact = `{"event":"created","pad":"${" ".repeat(1024 * 1024)}"}`;
  const declared = await deliver(`${server.base}/${t.organizationId}`, exact, {
    secret: t.secret,
    key: key(),
  });
  assertEquals(declared.status, 413);
  assertEquals((await logRows(t.organizationId)).length, 0);
});

Deno.test("malformed JSON and unknown neutral events: 400, logged as rejected", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const url = `${server.base}/${t.organizationId}`;
  const bad = await deliver(url, "{not json", { secret: t.secret, key: key() });
  assertEquals([bad.status, bad.json.error.code], [400, "invalid_json"]);
  const unknown = await deliver(url, {
    event: "exploded",
    subscription_id: sub.gatewayId,
    occurred_at: at(0),
  }, {
    secret: t.secret,
    key: key(),
  });
  assertEquals([unknown.status, unknown.json.error.code], [400, "unknown_event"]);
  const rpUnknown = await deliver(
    url,
    razorpaySubscriptionEvent("subscription.exploded", sub.gatewayId, at(0)),
    {
      secret: t.secret,
      header: "x-razorpay-signature",
      headers: { "x-razorpay-event-id": key() },
    },
  );
  // Verified Razorpay events we do not act on are acknowledged (Razorpay would retry a 4xx for a day).
  assertEquals([rpUnknown.status, rpUnknown.json.outcome], [200, "ignored"]);
  const noPayment = await deliver(url, {
    event: "charged",
    subscription_id: sub.gatewayId,
    occurred_at: at(0),
  }, {
    secret: t.secret,
    key: key(),
  });
  assertEquals([noPayment.status, noPayment.json.error.code], [400, "invalid_payload"]);
  const badTime = await deliver(url, {
    event: "paused",
    subscription_id: sub.gatewayId,
    occurred_at: "yesterday",
  }, {
    secret: t.secret,
    key: key(),
  });
  assertEquals(badTime.status, 400);
  // Unsigned garbage is refused as unverified first.
  assertEquals((await deliver(url, "{not json", { key: key() })).status, 401);

  const log = await logRows(t.organizationId);
  assertEquals(log.map((l) => l.status), [
    "rejected",
    "rejected",
    "processed",
    "rejected",
    "rejected",
    "unverified",
  ]);
  assertEquals(log[0]!.raw_body, "{not json");
  assertEquals(log[0]!.payload, null);
  assertEquals(log[1]!.event, "exploded");
  assertEquals((await subscriptionRow(sub.id)).status, "pending");

  // Not JSON and no organization in the URL: 400, counted without an organization, nothing kept.
  const counted = () =>
    sql()<{ deliveries: number; raw_body: string | null }[]>`
      select deliveries, raw_body from public.inbound_webhook_log
      where organization_id is null and provider = 'checkout' and error = 'Body is not valid JSON'
      order by received_at desc limit 1`;
  const before = (await counted())[0]?.deliveries ?? 0;
  assertEquals((await deliver(server.base, `garbage-${crypto.randomUUID()}`)).status, 400);
  const [orphan] = await counted();
  assertEquals([orphan?.raw_body, orphan?.deliveries], [null, before + 1]);
});

Deno.test("a body jsonb cannot hold (\\u0000) is applied and kept as text", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const raw = `{"event":"paused","subscription_id":"${sub.gatewayId}","occurred_at":"${
    at(0)
  }","note":"a\\u0000b"}`;
  const res = await deliver(`${server.base}/${t.organizationId}`, raw, { secret: t.secret, key: key() });
  assertEquals([res.status, res.json.status], [200, "processed"]);
  const [log] = await logRows(t.organizationId);
  assertEquals([log!.payload, log!.raw_body], [null, raw]);
  assertEquals((await subscriptionRow(sub.id)).status, "paused");
});

Deno.test("unknown subscription: logged as unmatched with 202, replayable once the row exists", async () => {
  const t = await paymentTenant();
  const gatewayId = `sub_later_${crypto.randomUUID().slice(0, 8)}`;
  const res = await deliver(`${server.base}/${t.organizationId}`, {
    event: "charged",
    subscription_id: gatewayId,
    occurred_at: at(0),
    payment: { id: "pay_early", amount_minor: 700, currency: "INR" },
  }, { secret: t.secret, key: key() });
  assertEquals([res.status, res.json.status], [202, "unmatched"]);
  assertEquals((await donationsOf(t.organizationId)).length, 0);
  const [logged] = await logRows(t.organizationId);
  assertEquals(logged!.status, "unmatched");

  const sub = await createSubscription(t.organizationId, { id: gatewayId });
  const replayed = await replayFailed(sql(), receiver, t.organizationId);
  assertEquals(replayed.map((r) => r.status), ["processed"]);
  assertEquals((await subscriptionRow(sub.id)).status, "active");
  assertEquals((await donationsOf(t.organizationId)).map((d) => d.gateway_payment_id), ["pay_early"]);
  // Replaying an applied payload changes nothing.
  assertEquals((await replayLogged(sql(), receiver, logged!.id))?.status, "duplicate");
  assertEquals((await replayFailed(sql(), receiver, t.organizationId)).length, 0);
  assertEquals((await donationsOf(t.organizationId)).length, 1);
  // Another organization's id does not reach this row.
  const other = await paymentTenant();
  assertEquals(await replayLogged(sql(), receiver, logged!.id, other.organizationId), null);
});

Deno.test("the replay script re-runs an organization's unmatched and failed deliveries", async () => {
  const t = await paymentTenant();
  const gatewayId = `sub_script_${crypto.randomUUID().slice(0, 8)}`;
  const res = await deliver(`${server.base}/${t.organizationId}`, {
    event: "paused",
    subscription_id: gatewayId,
    occurred_at: at(0),
  }, { secret: t.secret, key: key() });
  assertEquals(res.status, 202);
  const sub = await createSubscription(t.organizationId, { id: gatewayId, status: "active" });
  const run = (args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        "--allow-env",
        "--allow-read",
        "scripts/replay-inbound-webhooks.ts",
        ...args,
      ],
      cwd: new URL("../", import.meta.url).pathname,
      env: { SUPABASE_DB_URL: testDbUrl() },
    }).output();
  const out = await run(["--organization", t.organizationId]);
  const stdout = new TextDecoder().decode(out.stdout);
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  assertMatch(stdout, /"status":"processed"/);
  assertMatch(stdout, /1 replayed, 0 failed/);
  assertEquals((await subscriptionRow(sub.id)).status, "paused");
  // Nothing left to replay; a malformed id is a usage error.
  assertMatch(
    new TextDecoder().decode((await run(["--organization", t.organizationId])).stdout),
    /0 replayed/,
  );
  // The applied row named by id again: already applied, not counted as replayed.
  const logId = (stdout.match(/"log_id":"([0-9a-f-]{36})"/) ?? [])[1]!;
  assertMatch(
    new TextDecoder().decode((await run(["--log-id", logId])).stdout),
    /0 replayed, 0 failed, 1 already applied, 0 skipped/,
  );
  const bad = await run(["--log-id", "not-a-uuid"]);
  assertEquals(bad.code, 2);
});

Deno.test("duplicate delivery: 200, applied once", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const url = `${server.base}/${t.organizationId}`;
  const k = key();
  const body = { event: "payment_failed", subscription_id: sub.gatewayId, occurred_at: at(0) };
  const first = await deliver(url, body, { secret: t.secret, key: k });
  const second = await deliver(url, body, { secret: t.secret, key: k });
  assertEquals([first.status, first.json.status], [200, "processed"]);
  assertEquals([second.status, second.json.status], [200, "duplicate"]);
  assertEquals(second.json.log_id, first.json.log_id);
  assertEquals((await subscriptionRow(sub.id)).failure_count, 1);
  const [log] = await logRows(t.organizationId);
  assertEquals([log!.deliveries, log!.attempts], [2, 1]);
  // Without any key header the body hash is the key: an identical redelivery is still recognised.
  const noKey = { event: "payment_failed", subscription_id: sub.gatewayId, occurred_at: at(1) };
  await deliver(url, noKey, { secret: t.secret });
  const again = await deliver(url, noKey, { secret: t.secret });
  assertEquals(again.json.status, "duplicate");
  assertEquals((await subscriptionRow(sub.id)).failure_count, 2);
});

Deno.test("20 concurrent deliveries with the same key: applied once", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const k = key();
  const body = {
    event: "charged",
    subscription_id: sub.gatewayId,
    occurred_at: at(0),
    payment: { id: "pay_conc", amount_minor: 1000, currency: "INR" },
  };
  const replies = await Promise.all(
    Array.from(
      { length: 20 },
      () => deliver(`${server.base}/${t.organizationId}`, body, { secret: t.secret, key: k }),
    ),
  );
  assert(replies.every((r) => r.status === 200), JSON.stringify(replies.map((r) => r.status)));
  assertEquals(replies.filter((r) => r.json.status === "processed").length, 1);
  assertEquals(replies.filter((r) => r.json.status === "duplicate").length, 19);
  assertEquals((await donationsOf(t.organizationId)).length, 1);
  const log = await logRows(t.organizationId);
  assertEquals(log.map((l) => [l.status, l.deliveries, l.attempts]), [["processed", 20, 1]]);
});

Deno.test("a failed write: 500, logged failed with the error, nothing half-written; a retry applies again", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  // A real database failure on the donation insert, for this organization only.
  const fn = `test_fail_${crypto.randomUUID().replaceAll("-", "")}`;
  await sql().unsafe(`
    create function private.${fn}() returns trigger language plpgsql as $$
    begin
      if new.organization_id = '${t.organizationId}' then raise exception 'disk on fire'; end if;
      return new;
    end $$;
    create trigger ${fn} before insert on public.donations for each row execute function private.${fn}();`);
  const k = key();
  const body = {
    event: "charged",
    subscription_id: sub.gatewayId,
    occurred_at: at(0),
    payment: { id: "pay_fail", amount_minor: 1000, currency: "INR" },
  };
  const url = `${server.base}/${t.organizationId}`;
  try {
    const res = await deliver(url, body, { secret: t.secret, key: k });
    assertEquals([res.status, res.json.error.code], [500, "internal_error"]);
    assert(!JSON.stringify(res.json).includes("fire"), "the cause stays out of the response");
    // The state change and the donation are one unit: neither happened.
    assertEquals((await subscriptionRow(sub.id)).status, "pending");
    assertEquals((await donationsOf(t.organizationId)).length, 0);
    const [log] = await logRows(t.organizationId);
    assertEquals([log!.status, log!.attempts], ["failed", 1]);
    assertMatch(log!.error!, /disk on fire/);
    assertEquals((log!.payload as { payment: { id: string } }).payment.id, "pay_fail");
  } finally {
    await sql().unsafe(`drop trigger ${fn} on public.donations; drop function private.${fn}();`);
  }
  // The provider's retry with the same key applies it now.
  const retry = await deliver(url, body, { secret: t.secret, key: k });
  assertEquals([retry.status, retry.json.status], [200, "processed"]);
  assertEquals((await subscriptionRow(sub.id)).status, "active");
  assertEquals((await donationsOf(t.organizationId)).length, 1);
  const [log] = await logRows(t.organizationId);
  assertEquals([log!.status, log!.attempts, log!.deliveries, log!.error], ["processed", 2, 2, null]);
});

Deno.test("database down: 503 and nothing written", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const deadUrl = "postgresql://postgres@127.0.0.1:1/postgres";
  const deadSql = createSql(deadUrl, { max: 2 });
  const dead = await serveFunction(
    "checkout-webhook",
    createApp({ sql: deadSql, config: loadConfig({ SUPABASE_DB_URL: deadUrl }) }),
  );
  try {
    const res = await deliver(`${dead.base}/${t.organizationId}`, {
      event: "cancelled",
      subscription_id: sub.gatewayId,
      occurred_at: at(0),
    }, { secret: t.secret, key: key() });
    assertEquals([res.status, res.json.error.code], [503, "service_unavailable"]);
  } finally {
    await dead.close();
    await deadSql.end();
  }
  assertEquals((await subscriptionRow(sub.id)).status, "pending");
  assertEquals((await logRows(t.organizationId)).length, 0);
});

Deno.test("database connections terminated mid-stream: 503, then the retry applies once", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  const appName = `checkout-kill-${crypto.randomUUID().slice(0, 8)}`;
  const url = new URL(testDbUrl());
  url.searchParams.set("application_name", appName);
  const victimSql = createSql(url.toString(), { max: 1 });
  const victim = await serveFunction(
    "checkout-webhook",
    createApp({ sql: victimSql, config: loadConfig({ SUPABASE_DB_URL: url.toString() }) }),
  );
  const body = { event: "cancelled", subscription_id: sub.gatewayId, occurred_at: at(0) };
  const k = key();
  try {
    // Hold the subscription row so the apply is in flight when its connection is killed.
    const blocker = sql().begin(async (tx) => {
      await tx`select 1 from public.recurring_donations where id = ${sub.id} for update`;
      const pending = deliver(`${victim.base}/${t.organizationId}`, body, { secret: t.secret, key: k });
      for (let i = 0; i < 100; i++) {
        const [w] = await sql()<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%process_payment_webhook%'`;
        if (w!.n > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await sql()`select pg_terminate_backend(pid) from pg_stat_activity where query like '%process_payment_webhook%' and wait_event_type = 'Lock'`;
      return await pending;
    });
    const res = await blocker;
    assertEquals(res.status, 503, JSON.stringify(res.json));
  } finally {
    await victim.close();
    // The pool's only connection was killed under it; don't wait for it to say goodbye.
    await victimSql.end({ timeout: 1 });
  }
  assertEquals((await subscriptionRow(sub.id)).status, "pending");
  const [log] = await logRows(t.organizationId);
  assertEquals(log!.status, "received", "logged before applying, not applied");
  const retry = await deliver(`${server.base}/${t.organizationId}`, body, { secret: t.secret, key: k });
  assertEquals([retry.status, retry.json.status], [200, "processed"]);
  assertEquals((await subscriptionRow(sub.id)).status, "cancelled");
});

Deno.test("the log is readable by organization admins only", async () => {
  const t = await paymentTenant();
  const other = await paymentTenant();
  const sub = await createSubscription(t.organizationId);
  await deliver(`${server.base}/${t.organizationId}`, {
    event: "paused",
    subscription_id: sub.gatewayId,
    occurred_at: at(0),
  }, {
    secret: t.secret,
    key: key(),
  });
  const visible = (claims: Record<string, unknown>) =>
    asConfigApi(
      claims,
      async (tx) => (await tx`select id, payload from public.inbound_webhook_log`).length,
    );
  assertEquals(await visible(t.adminClaims), 1);
  assertEquals(await visible(t.staffClaims), 0);
  assertEquals(await visible(other.adminClaims), 0);
  // An admin of A who claims B in the token still sees nothing of B.
  assertEquals(await visible({ ...other.adminClaims, organization_id: t.organizationId }), 0);
  const anonDenied = await asUser(
    { role: "anon" },
    (tx) => tx`select id from public.inbound_webhook_log`,
  )
    .then(() => false, (e) => /permission denied/.test(String(e)));
  assert(anonDenied, "anon has no privilege on the log");
  const writeDenied = await asConfigApi(t.adminClaims, (tx) => tx`delete from public.inbound_webhook_log`)
    .then(() => false, (e) => /permission denied/.test(String(e)));
  assert(writeDenied, "not even admins rewrite the log");
  const secretDenied = await asConfigApi(
    t.adminClaims,
    (tx) =>
      tx`select * from private.inbound_webhook_targets('checkout', ${t.organizationId}::uuid, null, null)`,
  )
    .then(() => false, (e) => /permission denied/.test(String(e)));
  assert(secretDenied, "users cannot call the secret lookup");
});

Deno.test("close pools", async () => {
  await server.close();
  await appSql.end();
  await closeSql();
});
