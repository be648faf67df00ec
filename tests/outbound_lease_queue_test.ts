// The lease queue (lease_queue.ts) on its own, against the real database: the one place that claims.
// Sends are played by the test (each lease's outcome handed back at once), so what is checked is the
// queue's own decisions: claims riding along with result writes, the byte budget, and closing.
import { assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { addMembers, createEndpoint, deliveriesOf, retireEndpoints } from "./helpers/outbound.ts";
import type { Claimed } from "../supabase/functions/webhook-dispatcher/claims.ts";
import { LeaseQueue, type LeaseQueueOptions } from "../supabase/functions/webhook-dispatcher/lease_queue.ts";
import type { AttemptResult } from "../supabase/functions/webhook-dispatcher/send.ts";

const delivered = (): AttemptResult => ({
  outcome: "delivered",
  attempted_at: new Date().toISOString(),
  duration_ms: 1,
  response_status: 200,
  error: null,
  response_excerpt: null,
  retry_after_seconds: null,
  request_headers: null,
  response_headers: null,
});

/** A queue whose sends are answered by `answer` (at once by default); `sent` lists every lease sent. */
function queueFor(options: Partial<LeaseQueueOptions> = {}, answer?: (lease: Claimed) => void) {
  const sent: Claimed[] = [];
  const queue: LeaseQueue = new LeaseQueue(sql(), {
    perEndpoint: 2,
    perOrganization: 64,
    leaseSeconds: 60,
    claimBatch: 100,
    maxInFlight: 10,
    maxInFlightBytes: 1 << 20,
    flushBatch: 1000,
    flushDelayMs: 0,
    allowance: () => Infinity,
    send: (leases) => {
      for (const lease of leases) {
        sent.push(lease);
        if (answer) answer(lease);
        else setTimeout(() => queue.complete(lease, delivered()), 0);
      }
    },
    log: () => {},
    ...options,
  });
  return { queue, sent };
}

async function endpointWith(n: number) {
  const tenant = await createTenant();
  // Nothing listens there: the test answers for it.
  const ep = await createEndpoint(tenant.organizationId, "http://127.0.0.1:9/hook", ["member.created"]);
  await addMembers(tenant.organizationId, n);
  return ep;
}

Deno.test("an open queue keeps claiming along until nothing is left, without the loop", async () => {
  const ep = await endpointWith(7);
  const { queue, sent } = queueFor();
  try {
    assertEquals(await queue.take(10, new AbortController().signal), 2);
    while (sent.length < 7 || !queue.idle) await queue.changed(5000);
    assertEquals(sent.length, 7, "2 by the loop's claim, 5 along with writes");
    assertEquals(new Set(sent.map((l) => l.delivery_id)).size, 7, "each once");
    await queue.close();
    assertEquals((await deliveriesOf(ep.id)).every((d) => d.status === "delivered"), true);
  } finally {
    await retireEndpoints(ep.id);
  }
});

Deno.test("a claim stops at the bytes free; bytes held leave no room until their results are written", async () => {
  const ep = await endpointWith(4);
  const [size] = await sql()<{ n: number }[]>`
    select max(body_bytes) as n from public.webhook_deliveries where endpoint_id = ${ep.id}`;
  const held: Claimed[] = [];
  const { queue } = queueFor({ maxInFlightBytes: 2 * size!.n, perEndpoint: 10 }, (lease) => held.push(lease));
  try {
    // Room for two bodies: the database stops the claim there, though 4 are due and 10 rows were asked.
    assertEquals(await queue.take(10, new AbortController().signal), 2);
    assertEquals(queue.wanted(), 0, "the bytes held leave no room, though 8 slots are free");
    for (const lease of held.splice(0)) queue.complete(lease, delivered());
    while (!queue.idle) await queue.changed(5000);
    // The write began with the bytes still held, so it took nothing along; written, they are free.
    assertEquals([queue.stats.claimed, queue.stats.recorded], [2, 2]);
    assertEquals(queue.wanted(), 10, "room again: every slot");
  } finally {
    for (const lease of held.splice(0)) queue.complete(lease, delivered());
    await queue.close();
    await retireEndpoints(ep.id);
  }
});

Deno.test("a closing queue claims nothing, not even along with the writes it still makes", async () => {
  const ep = await endpointWith(5);
  const held: Claimed[] = [];
  const { queue } = queueFor({}, (lease) => held.push(lease));
  try {
    assertEquals(await queue.take(10, new AbortController().signal), 2);
    const closed = queue.close();
    assertEquals(queue.wanted(), 0);
    for (const lease of held.splice(0)) queue.complete(lease, delivered());
    await closed;
    assertEquals(queue.stats, { claimed: 2, delivered: 2, failed: 0, recorded: 2, released: 0 });
    const rows = await deliveriesOf(ep.id);
    assertEquals(rows.map((d) => d.status).sort(), [
      "delivered",
      "delivered",
      "pending",
      "pending",
      "pending",
    ]);
    assertEquals(rows.filter((d) => d.leased_until !== null).length, 0);
  } finally {
    await retireEndpoints(ep.id);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
