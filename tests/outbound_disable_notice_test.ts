// An endpoint the system disables tells the organization: a 410 Gone from a real receiver disables the
// endpoint, keeps the reason, and the organization's other endpoint subscribed to
// webhook.endpoint.disabled receives the notice (without the secret), exactly as after 5 days of
// failures; another organization gets nothing, and an administrator's own disable sends no notice.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";

Deno.test("410 Gone disables the endpoint and notifies the organization's other subscribed endpoints", async () => {
  const org = await createTenant();
  const other = await createTenant();
  const gone = await startReceiver(() => new Response("gone", { status: 410 }));
  const manual = await startReceiver();
  const listener = await startReceiver();
  const otherListener = await startReceiver();
  const epGone = await createEndpoint(org.organizationId, `${gone.url}/hook`, ["member.created"]);
  const epManual = await createEndpoint(org.organizationId, `${manual.url}/hook`, ["member.created"]);
  const epListener = await createEndpoint(org.organizationId, `${listener.url}/hook`, [
    "webhook.endpoint.disabled",
  ]);
  const epOther = await createEndpoint(other.organizationId, `${otherListener.url}/hook`, [
    "webhook.endpoint.disabled",
  ]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${org.organizationId}, 'Ada')`;
    await testEngine().run({ stopWhenIdle: true });
    await testEngine().run({ stopWhenIdle: true });
    assertEquals(gone.requests.length, 1);

    const [ep] = await sql()<{ enabled: boolean; disabled_reason: string }[]>`
      select enabled, disabled_reason from public.webhook_endpoints where id = ${epGone.id}`;
    assertEquals(ep!.enabled, false);
    assertMatch(ep!.disabled_reason, /^the endpoint answered 410 Gone at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    await listener.waitFor(1, 5000);
    const notice = JSON.parse(listener.requests[0]!.text);
    assertEquals(notice.type, "webhook.endpoint.disabled");
    assertEquals(listener.requests[0]!.headers.get("x-webhook-event"), "webhook.endpoint.disabled");
    assertEquals(notice.organization_id, org.organizationId);
    assertEquals(notice.data.row.id, epGone.id);
    assertEquals(notice.data.row.url, `${gone.url}/hook`);
    assertEquals(notice.data.row.enabled, false);
    assertEquals(notice.data.row.disabled_reason, ep!.disabled_reason);
    assertEquals(notice.data.delta.disabled_reason, ep!.disabled_reason);
    assert(!("secret" in notice.data.row), "no secret field");
    assert(!listener.requests[0]!.text.includes(epGone.secret), "the secret is nowhere in the body");
    assertEquals((await deliveriesOf(epListener.id)).map((d) => d.status), ["delivered"]);

    // An administrator's own disable is a plain update: no notice.
    await sql()`update public.webhook_endpoints set enabled = false where id = ${epManual.id}`;
    await testEngine().run({ stopWhenIdle: true });
    assertEquals(listener.requests.length, 1, "only the system's disable was announced");
    assertEquals(otherListener.requests.length, 0, "another organization hears nothing");
    assertEquals((await deliveriesOf(epOther.id)).length, 0);
  } finally {
    await retireEndpoints(epGone.id, epManual.id, epListener.id, epOther.id);
    await Promise.all([gone.close(), manual.close(), listener.close(), otherListener.close()]);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
