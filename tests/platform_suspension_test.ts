// Suspension end to end, through the real receivers, the real dispatcher engine and a real receiver on
// loopback: a suspended organization's inbound webhooks are kept and answered 503, and the provider's
// retry after the platform admin resumes it applies them once; its outbound deliveries wait (not
// failed) and go out exactly once after resuming.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createUser, sql } from "./helpers/db.ts";
import { startInboundStack } from "./helpers/inbound_stack.ts";
import {
  createSubscription,
  deliver,
  donationsOf,
  logRows,
  paymentTenant,
  subscriptionRow,
} from "./helpers/payments.ts";
import { createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call } from "./helpers/webhooks_api.ts";

async function platformAdmin(): Promise<Record<string, string>> {
  const user = await createUser(`ops-${crypto.randomUUID()}@platform.example`);
  await sql()`insert into public.platform_user_flags (user_id, is_platform_admin) values (${user.id}, true)`;
  return asBearer(await tokenFor(user, undefined, { claims: { is_platform_admin: true } }));
}

Deno.test("a suspended organization's checkout webhook is kept, answered 503, and applied once by the retry after resuming", async () => {
  const stack = await startInboundStack();
  try {
    const t = await paymentTenant();
    const sub = await createSubscription(t.organizationId);
    const ops = await platformAdmin();
    const url = `${stack.base("checkout-webhook")}/${t.organizationId}`;
    const key = `evt_${crypto.randomUUID()}`;
    const charge = {
      event: "charged",
      subscription_id: sub.gatewayId,
      occurred_at: new Date().toISOString(),
      payment: { id: `pay_${crypto.randomUUID().slice(0, 8)}`, amount_minor: 25000, currency: "INR" },
    };

    const suspend = await call(
      stack.base("webhooks"),
      "POST",
      `/platform/organizations/${t.organizationId}/suspend`,
      ops,
      {
        reason: "Card disputes under review",
      },
    );
    assertEquals(suspend.status, 200, suspend.text);

    const held = await deliver(url, charge, { secret: t.secret, key });
    assertEquals(
      [held.status, held.json.error.code],
      [503, "organization_suspended"],
      "providers retry a 5xx",
    );
    let log = await logRows(t.organizationId);
    assertEquals(log.map((l) => [l.status, l.signature_valid]), [["received", true]], "kept, not applied");
    assertEquals((await subscriptionRow(sub.id)).status, "pending");
    assertEquals((await donationsOf(t.organizationId)).length, 0);
    // A forged request for the suspended organization is still refused for its signature, and kept nowhere.
    const forged = await deliver(url, charge, {
      secret: "not-the-secret",
      key: `evt_${crypto.randomUUID()}`,
    });
    assertEquals(forged.status, 401);

    const again = await deliver(url, charge, { secret: t.secret, key });
    assertEquals(again.status, 503, "the provider's retry while still suspended: the same answer");

    const resumed = await call(
      stack.base("webhooks"),
      "POST",
      `/platform/organizations/${t.organizationId}/resume`,
      ops,
      {},
    );
    assertEquals(resumed.status, 200, resumed.text);

    const retry = await deliver(url, charge, { secret: t.secret, key });
    assertEquals([retry.status, retry.json.status], [200, "processed"], JSON.stringify(retry.json));
    const late = await deliver(url, charge, { secret: t.secret, key });
    assertEquals([late.status, late.json.status], [200, "duplicate"]);
    assertEquals((await subscriptionRow(sub.id)).status, "active");
    assertEquals((await donationsOf(t.organizationId)).map((d) => d.gateway_payment_id), [charge.payment.id]);
    log = await logRows(t.organizationId);
    assertEquals(
      log.filter((l) => l.signature_valid).map((l) => [l.status, l.deliveries, l.attempts]),
      [["processed", 4, 1]],
      "one row: four deliveries, applied once",
    );
  } finally {
    await stack.close();
  }
});

Deno.test("a suspended organization's deliveries wait, due and not failed, and go out exactly once after resuming", async () => {
  const stack = await startInboundStack();
  const receiver = await startReceiver();
  const t = await paymentTenant();
  const endpoint = await createEndpoint(t.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    const ops = await platformAdmin();
    // One delivery that failed before the suspension (retrying), and one made while suspended.
    await sql()`insert into public.members (organization_id, first_name) values (${t.organizationId}, 'Before')`;
    await sql()`update public.webhook_deliveries
                set status = 'retrying', attempt_count = 1, first_attempt_at = now() - interval '1 hour'
                where endpoint_id = ${endpoint.id}`;
    const suspend = await call(
      stack.base("webhooks"),
      "POST",
      `/platform/organizations/${t.organizationId}/suspend`,
      ops,
      {
        reason: "Abuse report",
      },
    );
    assertEquals(suspend.status, 200);
    await sql()`insert into public.members (organization_id, first_name) values (${t.organizationId}, 'During')`;

    await testEngine().run({ stopWhenIdle: true });
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(receiver.requests.length, 0, "nothing is sent while suspended");
    let rows = await deliveriesOf(endpoint.id);
    assertEquals(rows.map((d) => d.status).sort(), ["pending", "retrying"], "both wait, neither failed");
    assert(rows.every((d) => d.next_attempt_at !== null && d.next_attempt_at <= new Date()), "both are due");
    await sql()`select private.webhook_housekeeping()`;
    assertEquals((await deliveriesOf(endpoint.id)).map((d) => d.status).sort(), ["pending", "retrying"]);

    const resumed = await call(
      stack.base("webhooks"),
      "POST",
      `/platform/organizations/${t.organizationId}/resume`,
      ops,
      {
        reason: "Cleared",
      },
    );
    assertEquals([resumed.status, resumed.data.health.deliveries_open], [200, 2], resumed.text);

    await testEngine().run({ stopWhenIdle: true });
    await receiver.waitFor(2);
    await testEngine().run({ stopWhenIdle: true });
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(receiver.requests.length, 2, "each delivered exactly once");
    const names = receiver.requests.map((r) => JSON.parse(r.text).data.row.first_name).sort();
    assertEquals(names, ["Before", "During"]);
    rows = await deliveriesOf(endpoint.id);
    assertEquals(rows.map((d) => d.status), ["delivered", "delivered"]);

    const [entry] = await sql()<{ details: { deliveries_released: number } }[]>`
      select details from public.audit_log
      where organization_id = ${t.organizationId} and action = 'organization.resumed'`;
    assertEquals(entry!.details.deliveries_released, 2);
  } finally {
    await retireEndpoints(endpoint.id);
    await receiver.close();
    await stack.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
