// One organization with many slow endpoints used to starve every other organization: the claim never
// looked at organizations, so its backlog over enough endpoints held every dispatcher slot (the only
// isolation was the per-endpoint cap), and another organization's lone delivery waited until those
// sends ended. Here the heavy organization's receivers do not answer at all until the test lets them:
// the other organization's delivery must arrive meanwhile. The per-organization cap holds across two
// dispatchers (the database counts everyone's leases).
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { addMembers, createEndpoint, deliveriesOf, gate, retireEndpoints } from "./helpers/outbound.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { DeliveryEngine } from "../supabase/functions/webhook-dispatcher/engine.ts";

Deno.test("a heavy organization's hanging endpoints leave room for another organization's delivery", async () => {
  const heavy = await createTenant();
  const light = await createTenant();
  const hold = gate();
  let active = 0;
  let maxActive = 0;
  const receiver = await startReceiver(async (req) => {
    if (!req.path.startsWith("/heavy")) return new Response("ok");
    active++;
    maxActive = Math.max(maxActive, active);
    await hold.wait;
    active--;
    return new Response("ok");
  });
  // 8 endpoints x 4 per endpoint = 32: every slot of the two dispatchers below, without the cap.
  const heavyEndpoints = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) => createEndpoint(heavy.organizationId, `${receiver.url}/heavy${i}`, ["member.created"]),
    ),
  );
  const lightEndpoint = await createEndpoint(light.organizationId, `${receiver.url}/light`, [
    "member.created",
  ]);
  const pools = [createSql(testDbUrl(), { max: 3 }), createSql(testDbUrl(), { max: 3 })];
  const engines = pools.map((p) =>
    new DeliveryEngine(p, {
      allowPrivateTargets: true,
      timeoutMs: 30_000,
      maxInFlight: 16,
      perEndpoint: 4,
      perOrganization: 12,
      log: () => {},
    })
  );
  let runs: Promise<unknown>[] = [];
  try {
    await addMembers(heavy.organizationId, 100);
    runs = engines.map((e) => e.run({ stopWhenIdle: true, pollMs: 100 }));
    await receiver.waitFor(12, 10_000);
    await addMembers(light.organizationId, 1);
    for (const e of engines) e.wake();
    // Without the cap this never arrives while the heavy receivers hold every slot.
    const lightArrived = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 15_000);
      const poll = setInterval(() => {
        if (receiver.requests.some((r) => r.path === "/light")) {
          clearTimeout(timer);
          clearInterval(poll);
          resolve(true);
        }
      }, 10);
    });
    assert(lightArrived, "the other organization's delivery arrived while the heavy one's were held");
    assertEquals(active, 12, "the heavy organization had 12 in flight then, across both dispatchers");
    hold.open();
    await Promise.all(runs);
    assertEquals(maxActive, 12, "and never more than its cap");
    const heavyRows = (await Promise.all(heavyEndpoints.map((e) => deliveriesOf(e.id)))).flat();
    assertEquals(heavyRows.length, 800);
    assert(heavyRows.every((d) => d.status === "delivered"), "the heavy organization's backlog drained too");
    assertEquals((await deliveriesOf(lightEndpoint.id)).map((d) => d.status), ["delivered"]);
  } finally {
    hold.open();
    await Promise.all(runs);
    await retireEndpoints(...heavyEndpoints.map((e) => e.id), lightEndpoint.id);
    await Promise.all(pools.map((p) => p.end()));
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
