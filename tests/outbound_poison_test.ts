// A delivery that kills the dispatcher sending it (here: the dispatcher is killed with SIGKILL each
// time it is in the middle of sending that one) used to be claimed first again by every dispatcher,
// forever: nothing is recorded for an attempt cut short, so it stayed the oldest pending delivery, with
// no attempt and no retry window. Now, claimed three times without a recorded result, it is claimed no
// more, other deliveries flow, and housekeeping sets it aside with the reason in Webhook Logs.
import { assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  addMembers,
  createEndpoint,
  deliveriesOf,
  gate,
  killDispatcher,
  retireEndpoints,
  runOutLeases,
  spawnDispatcher,
  testEngine,
} from "./helpers/outbound.ts";

Deno.test("a delivery whose dispatcher dies during each attempt is set aside after 3 claims; others flow", async () => {
  const victim = await createTenant();
  const other = await createTenant();
  const hold = gate();
  const receiver = await startReceiver((req) =>
    req.path === "/poison" ? hold.wait.then(() => new Response("late")) : new Response("ok")
  );
  const poisonCount = () => receiver.requests.filter((r) => r.path === "/poison").length;
  const epPoison = await createEndpoint(victim.organizationId, `${receiver.url}/poison`, ["member.created"]);
  const epOk = await createEndpoint(other.organizationId, `${receiver.url}/ok`, ["member.created"]);
  try {
    await addMembers(victim.organizationId, 1);
    for (let kill = 1; kill <= 3; kill++) {
      const child = spawnDispatcher();
      while (poisonCount() < kill) await new Promise((r) => setTimeout(r, 20));
      assertEquals((await killDispatcher(child)).signal, "SIGKILL");
      // Nothing was recorded: still pending, no attempt. Time passes: the dead dispatcher's lease runs out.
      const [d] = await deliveriesOf(epPoison.id);
      assertEquals([d!.status, d!.attempt_count], ["pending", 0]);
      await runOutLeases([epPoison.id]);
    }

    await addMembers(other.organizationId, 5);
    await testEngine({ timeoutMs: 2000 }).run({ stopWhenIdle: true });
    assertEquals(poisonCount(), 3, "not sent a fourth time");
    const ok = await deliveriesOf(epOk.id);
    assertEquals(
      ok.map((d) => d.status),
      Array(5).fill("delivered"),
      "the other organization's deliveries flow",
    );

    const [hk] = await sql()<{ r: { set_aside: number } }[]>`select private.webhook_housekeeping() as r`;
    assertEquals(hk!.r.set_aside, 1);
    const [poison] = await deliveriesOf(epPoison.id);
    assertEquals(poison!.status, "permanently_failed");
    assertMatch(poison!.last_error ?? "", /^set aside: claimed 3 times without a recorded result/);
  } finally {
    hold.open();
    await retireEndpoints(epPoison.id, epOk.id);
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
