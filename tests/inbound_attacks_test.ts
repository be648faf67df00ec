// Replays, unverified input and crowding out, performed as an adversarial review performed them against
// the payment and messaging receivers: each test is the attack, and what must (not) get through.
import { assert, assertEquals } from "./helpers/assert.ts";
import { asConfigApi, asUser, closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import { createSubscription, deliver, logRows, paymentTenant, subscriptionRow } from "./helpers/payments.ts";
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
const at = (minute: number) => new Date(Date.UTC(2026, 10, 23, 9, minute)).toISOString();

// Replays: the same event under new keys -----------------------------------------------------------------------------------------

Deno.test("replay: one genuine signed body sent again under five new Idempotency-Keys applies once", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const url = `${checkout.base}/${t.organizationId}`;
  const body = { event: "payment_failed", subscription_id: sub.gatewayId, occurred_at: at(0) };
  const first = await deliver(url, body, { secret: t.secret, key: "evt-original" });
  assertEquals([first.status, first.json.status], [200, "processed"]);
  for (let i = 0; i < 5; i++) {
    const again = await deliver(url, body, { secret: t.secret, key: `evt-replayed-${i}` });
    assertEquals([again.status, again.json.status, again.json.log_id], [200, "duplicate", first.json.log_id]);
  }
  const row = await subscriptionRow(sub.id);
  assertEquals([row.status, row.failure_count], ["past_due", 1]);
  // One log row, counting the six deliveries.
  const log = await logRows(t.organizationId);
  assertEquals(log.map((l) => [l.status, l.deliveries, l.attempts]), [["processed", 6, 1]]);
});

Deno.test("replay: an event at the same time as the last applied one never counts a failure twice", async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  const url = `${checkout.base}/${t.organizationId}`;
  // Two differently serialized (so differently hashed) signed bodies for the same failure at one instant.
  const body = { event: "payment_failed", subscription_id: sub.gatewayId, occurred_at: at(5) };
  assertEquals((await deliver(url, body, { secret: t.secret, key: "a" })).json.status, "processed");
  const reserialized = JSON.stringify(body, null, 2);
  const second = await deliver(url, reserialized, { secret: t.secret, key: "b" });
  assertEquals(second.status, 200);
  assertEquals((await subscriptionRow(sub.id)).failure_count, 1);
  // A later failure still counts.
  const later = { ...body, occurred_at: at(6) };
  assertEquals((await deliver(url, later, { secret: t.secret, key: "c" })).json.status, "processed");
  assertEquals((await subscriptionRow(sub.id)).failure_count, 2);
});

Deno.test("replay: a verified body already processed for one organization still applies for another", async () => {
  // The content hash is per organization and provider: another tenant's identical body is its own.
  const a = await paymentTenant();
  const b = await paymentTenant();
  const id = `sub_same_${crypto.randomUUID().slice(0, 8)}`;
  const sa = await createSubscription(a.organizationId, { id, status: "active" });
  const sb = await createSubscription(b.organizationId, { id, status: "active" });
  const body = { event: "paused", subscription_id: id, occurred_at: at(1) };
  assertEquals(
    (await deliver(`${checkout.base}/${a.organizationId}`, body, { secret: a.secret })).status,
    200,
  );
  assertEquals(
    (await deliver(`${checkout.base}/${b.organizationId}`, body, { secret: b.secret })).status,
    200,
  );
  assertEquals([(await subscriptionRow(sa.id)).status, (await subscriptionRow(sb.id)).status], [
    "paused",
    "paused",
  ]);
});

// Unverified input: forged and unsigned bodies -----------------------------------------------------------------------------------------

Deno.test("unverified input: forged, padded, unsigned payment deliveries leave a bounded trace with no attacker text", async () => {
  const t = await paymentTenant();
  const url = `${payments.base}/${t.organizationId}`;
  const forged = {
    event: "refund.processed — ATTENTION ADMIN: call +1 555 0100 to verify your account",
    pad: "x".repeat(70 * 1024),
  };
  const raw = JSON.stringify(forged);
  for (let i = 0; i < 40; i++) {
    const res = await deliver(url, raw, {
      headers: { "x-payments-signature": "00".repeat(32), "user-agent": "Evil/1.0 call me" },
      key: `forged-key-${i}`,
    });
    assertEquals(res.status, 401);
  }
  const unsigned = await deliver(url, raw, {});
  assertEquals(unsigned.status, 401);

  // What an admin of the organization reads.
  const seen = await asConfigApi(t.adminClaims, (tx) =>
    tx<
      {
        event: string | null;
        payload: unknown;
        raw_body: string | null;
        headers: Record<string, unknown>;
        idempotency_key: string | null;
        error: string;
        deliveries: number;
        body_bytes: number;
      }[]
    >`select event, payload, raw_body, headers, idempotency_key, error, deliveries, body_bytes::float8 as body_bytes
      from public.inbound_webhook_log order by error`);
  // Bounded: one row per reason (and hour), counting the deliveries; never the body, event or headers.
  assertEquals(seen.map((r) => [r.error, r.deliveries]), [["signature mismatch", 40], [
    "signature missing",
    1,
  ]]);
  for (const r of seen) {
    assertEquals([r.event, r.payload, r.raw_body, r.idempotency_key], [null, null, null, null]);
    assertEquals(r.headers, {});
    assert(!JSON.stringify(r).includes("ATTENTION") && !JSON.stringify(r).includes("Evil"));
  }
  assertEquals(seen[0]!.body_bytes, 40 * new TextEncoder().encode(raw).byteLength);
  const [size] = await sql()<{ bytes: number }[]>`
    select coalesce(sum(pg_column_size(l.*)), 0)::int as bytes from public.inbound_webhook_log l
    where organization_id = ${t.organizationId}`;
  assert(size!.bytes < 2048, `the log holds ${size!.bytes} bytes for 41 forged deliveries`);
});

Deno.test("unverified input: a body nobody can attribute is not kept either", async () => {
  const before = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.inbound_webhook_log where organization_id is null`;
  for (let i = 0; i < 10; i++) {
    const res = await deliver(checkout.base, `not json ${"y".repeat(100 * 1024)} ${i}`, {});
    assertEquals(res.status, 400);
  }
  const rows = await sql()<{ raw_body: string | null; payload: unknown; event: string | null }[]>`
    select raw_body, payload, event from public.inbound_webhook_log where organization_id is null`;
  assert(rows.length - before[0]!.n <= 1, `${rows.length - before[0]!.n} rows for 10 unattributable bodies`);
  for (const r of rows) assertEquals([r.raw_body, r.payload, r.event], [null, null, null]);
});

Deno.test("unverified input: an unsigned 1 MB messaging body naming 6,000 unknown phone-number ids logs a bounded line", async () => {
  const ids = Array.from({ length: 6000 }, (_, i) => `9${String(i).padStart(6, "0")}${"1".repeat(30)}`);
  const body = {
    object: "whatsapp_business_account",
    entry: [{
      id: "1",
      changes: ids.map((id) => ({
        value: {
          metadata: { phone_number_id: id },
          statuses: [{ id: "wamid.x", status: "read", timestamp: "1", recipient_id: "15550100" }],
        },
      })),
    }],
  };
  const raw = JSON.stringify(body);
  assert(raw.length > 900_000 && raw.length < 1024 * 1024, `body is ${raw.length} bytes`);
  const captured: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => captured.push(args.map(String).join(" "));
  try {
    for (let i = 0; i < 5; i++) {
      const res = await fetch(messaging.base, {
        method: "POST",
        body: raw,
        // Not signed by anyone: a junk signature header.
        headers: { "content-type": "application/json", "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
      });
      await res.body?.cancel();
      assert(res.status < 500, `status ${res.status}`);
    }
  } finally {
    console.warn = warn;
  }
  // One line for the five (the rest are counted, not logged, within the minute), and that line says
  // what happened without growing with the body: the count and a few ids cut short.
  assertEquals(captured.length, 1, captured.join("\n"));
  const line = JSON.parse(captured[0]!);
  assertEquals([line.msg, line.count], ["unknown phone_number_id, changes skipped", 6000]);
  assert(line.sample.length <= 3 && line.sample.every((id: string) => id.length <= 32), captured[0]);
  assert(captured[0]!.length < 2048, `${captured[0]!.length} bytes of warning log for 5 such bodies`);
});

// Crowding out: many candidates for one id -----------------------------------------------------------------------------------------

Deno.test("crowding out: sixty organizations storing org C's subscription id cannot crowd out C's signed delivery", async () => {
  const gatewayId = `sub_target_${crypto.randomUUID().slice(0, 8)}`;
  // Staff of sixty other organizations (forty created before C, twenty after) insert C's
  // gateway_subscription_id into their own tenant.
  const crowd = async () => {
    const other = await paymentTenant();
    await asUser(
      other.staffClaims,
      (tx) =>
        tx`insert into public.recurring_donations (organization_id, gateway_subscription_id, status,
                                                 amount_minor, currency, interval)
         values (${other.organizationId}, ${gatewayId}, 'active', 100, 'INR', 'month')`,
    );
  };
  for (let i = 0; i < 40; i++) await crowd();
  const c = await paymentTenant();
  const sub = await createSubscription(c.organizationId, { id: gatewayId, status: "active" });
  for (let i = 0; i < 20; i++) await crowd();
  const body = { event: "paused", subscription_id: sub.gatewayId, occurred_at: at(2) };
  // No organization in the URL: the routing is by the subscription id alone.
  const res = await deliver(checkout.base, body, { secret: c.secret });
  assertEquals([res.status, res.json?.status], [200, "processed"]);
  assertEquals((await subscriptionRow(sub.id)).status, "paused");
});

Deno.test("crowding out: with the organization in the URL a crowd of candidates is irrelevant, and a forger still gets 401", async () => {
  const c = await paymentTenant();
  const sub = await createSubscription(c.organizationId, { status: "active" });
  const body = { event: "cancelled", subscription_id: sub.gatewayId, occurred_at: at(3) };
  const forged = await deliver(checkout.base, body, { secret: "whsec_guess" });
  assertEquals(forged.status, 401);
  assertEquals((await subscriptionRow(sub.id)).status, "active");
  await createTenant(); // unrelated tenant, nothing to do with routing
  const ok = await deliver(`${checkout.base}/${c.organizationId}`, body, { secret: c.secret });
  assertEquals(ok.status, 200);
  assertEquals((await subscriptionRow(sub.id)).status, "cancelled");
});

Deno.test("close", async () => {
  await Promise.all([checkout.close(), payments.close(), messaging.close()]);
  await appSql.end({ timeout: 5 });
  await closeSql();
});
