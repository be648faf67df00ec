// Inbound payment webhook log through the configuration API: admins read their organization's entries
// and replay them through the live code path; staff, other organizations, API keys and anonymous
// callers cannot.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { createSubscription, deliver, paymentTenant } from "./helpers/payments.ts";
import { createApp as createCheckoutApp } from "../supabase/functions/checkout-webhook/app.ts";

async function start() {
  const api = await startWebhooksApi();
  const checkout = await serveFunction("checkout-webhook", createCheckoutApp(api.deps));
  return {
    api: api.base,
    checkout: checkout.base,
    close: async () => {
      await checkout.close();
      await api.close();
    },
  };
}

const auth = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });

Deno.test("an admin lists the log, replays an unmatched charge once its subscription exists, and a second replay changes nothing", async () => {
  const s = await start();
  try {
    const a = await paymentTenant();
    const gatewayId = `sub_${crypto.randomUUID().slice(0, 10)}`;
    const event = {
      event: "charged",
      subscription_id: gatewayId,
      occurred_at: new Date().toISOString(),
      payment: { id: `pay_${crypto.randomUUID().slice(0, 10)}`, amount_minor: 2500, currency: "INR" },
    };
    const sent = await deliver(`${s.checkout}/${a.organizationId}`, event, {
      secret: a.secret,
      key: crypto.randomUUID(),
    });
    assert(sent.status >= 200 && sent.status < 300, `unmatched is acknowledged (${sent.status})`);

    const admin = await tokenFor(a.admin, a.organizationId);
    const list = await (await fetch(`${s.api}/inbound-log?status=unmatched`, { headers: auth(admin) }))
      .json();
    assertEquals(list.data.length, 1);
    const entry = list.data[0];
    assertEquals([entry.provider, entry.event, entry.status], ["checkout", "charged", "unmatched"]);

    const detail = await (await fetch(`${s.api}/inbound-log/${entry.id}`, { headers: auth(admin) })).json();
    assertEquals(detail.payload.subscription_id, gatewayId);

    await createSubscription(a.organizationId, { id: gatewayId, status: "active" });
    const replay = await fetch(`${s.api}/inbound-log/${entry.id}/replay`, {
      method: "POST",
      headers: auth(admin),
    });
    assertEquals(replay.status, 200);
    assertEquals((await replay.json()).status, "processed");
    const again =
      await (await fetch(`${s.api}/inbound-log/${entry.id}/replay`, { method: "POST", headers: auth(admin) }))
        .json();
    assertEquals(again.status, "duplicate");
    const donations =
      await sql()`select amount_minor from public.donations where organization_id = ${a.organizationId}`;
    assertEquals(donations.map((d) => Number(d.amount_minor)), [2500], "the charge is recorded exactly once");

    const failedRun =
      await (await fetch(`${s.api}/inbound-log/replay-failed`, { method: "POST", headers: auth(admin) }))
        .json();
    assertEquals(failedRun.data, [], "nothing left to replay");
  } finally {
    await s.close();
  }
});

Deno.test("staff, other organizations, API keys and anonymous callers cannot read or replay the log", async () => {
  const s = await start();
  try {
    const a = await paymentTenant();
    const b = await paymentTenant();
    const event = { event: "paused", subscription_id: "sub_nope", occurred_at: new Date().toISOString() };
    await deliver(`${s.checkout}/${a.organizationId}`, event, { secret: a.secret, key: crypto.randomUUID() });
    const [row] =
      await sql()`select id from public.donation_payment_webhook_log where organization_id = ${a.organizationId}`;
    const logId = row!.id as string;

    const staff = await tokenFor(a.staff, a.organizationId);
    assertEquals((await fetch(`${s.api}/inbound-log`, { headers: auth(staff) })).status, 403);
    assertEquals(
      (await fetch(`${s.api}/inbound-log/${logId}/replay`, { method: "POST", headers: auth(staff) })).status,
      403,
    );

    const adminB = await tokenFor(b.admin, b.organizationId);
    assertEquals((await (await fetch(`${s.api}/inbound-log`, { headers: auth(adminB) })).json()).data, []);
    assertEquals((await fetch(`${s.api}/inbound-log/${logId}`, { headers: auth(adminB) })).status, 404);
    assertEquals(
      (await fetch(`${s.api}/inbound-log/${logId}/replay`, { method: "POST", headers: auth(adminB) })).status,
      404,
    );

    const adminA = await tokenFor(a.admin, a.organizationId);
    const key = await (await fetch(`${s.api}/api-keys`, {
      method: "POST",
      headers: auth(adminA),
      body: JSON.stringify({ name: "Zapier" }),
    })).json();
    const asKey = await fetch(`${s.api}/inbound-log`, { headers: { "x-api-key": key.key } });
    assertEquals(asKey.status, 403);
    const refusal = (await asKey.json()).error;
    assertEquals(refusal.code, "user_required");
    assertEquals(refusal.message, "API keys cannot read or replay the inbound payment log");

    assertEquals((await fetch(`${s.api}/inbound-log`)).status, 401);
    const badCursor = await fetch(`${s.api}/inbound-log?cursor=nonsense`, { headers: auth(adminA) });
    assertEquals([badCursor.status, (await badCursor.json()).error.code], [400, "invalid_cursor"]);
  } finally {
    await s.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
