// When results are written: the engine gathers them for a short delay into one batch, but never while
// nothing else can come. An endpoint's slots come back only once its results are written (the cap is
// counted on leases), so waiting then would hold the next claim for nothing: claim, send, wait, record
// in lock-step, which halved the dispatch benchmark's rate. Each test sets a 10-minute batching delay:
// an engine that waited for it would record nothing within the minute the tests give it.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  addMembers,
  allDelivered,
  createEndpoint,
  gate,
  retireEndpoints,
  testEngine,
} from "./helpers/outbound.ts";

const FLUSH_DELAY_MS = 600_000;
const WITHIN_MS = 60_000;

Deno.test("the last send in flight ending writes the results at once, not after the batching delay", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    await addMembers(tenant.organizationId, 6);
    // 2 at a time: the 6 deliveries need 3 rounds, each waiting for the previous round's results.
    const engine = testEngine({ maxInFlight: 6, perEndpoint: 2, flushDelayMs: FLUSH_DELAY_MS });
    const started = Date.now();
    const run = engine.run({ stopWhenIdle: true, deadline: started + 2 * WITHIN_MS });
    await allDelivered(ep.id, 6, started, WITHIN_MS);
    await run;
    assertEquals(receiver.requests.length, 6, "each delivery sent once");
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("the last send to a full endpoint ending writes at once, while another endpoint hangs", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const hanging = await startReceiver(async () => {
    await hold.wait;
    return new Response("late");
  });
  const fast = await startReceiver();
  const epH = await createEndpoint(tenant.organizationId, `${hanging.url}/hook`, ["member.created"]);
  const epF = await createEndpoint(tenant.organizationId, `${fast.url}/hook`, ["member.created"]);
  try {
    await addMembers(tenant.organizationId, 6);
    // The hanging endpoint always has 2 sends in flight, so the engine is never without one.
    const engine = testEngine({
      maxInFlight: 6,
      perEndpoint: 2,
      flushDelayMs: FLUSH_DELAY_MS,
      timeoutMs: 3000,
    });
    const started = Date.now();
    const run = engine.run({ stopWhenIdle: true, deadline: started + 2 * WITHIN_MS });
    await allDelivered(epF.id, 6, started, WITHIN_MS);
    assertEquals(fast.requests.length, 6, "each delivery sent once");
    assert(hanging.requests.length <= 2, `the hanging endpoint kept to its cap: ${hanging.requests.length}`);
    hold.open();
    await run;
  } finally {
    hold.open();
    await retireEndpoints(epH.id, epF.id);
    await Promise.all([hanging.close(), fast.close()]);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
