// A run that is ending while a result write it started is still under way. That write may bring back
// deliveries it claimed along with the results; a run stopped by its signal gives them back unsent (due
// again at once, no attempt counted) before it returns, and never starts them on a run already cleared away (which crashed the process with an unhandled rejection and
// left them sent but unrecorded, to be sent again when their leases ran out). The write is made slow on
// purpose: the test holds the claims' turn lock, so the claim inside the write waits for the test.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  addMembers,
  createEndpoint,
  deliveriesOf,
  gate,
  retireEndpoints,
  testEngine,
} from "./helpers/outbound.ts";

/** Waits until some session waits for an advisory lock (the write's claim, queued behind the test). */
async function untilAdvisoryLockAwaited(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [r] = await sql()<{ n: number }[]>`
      select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`;
    if (r!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("no claim ever waited for the turn lock");
}

Deno.test("a write claiming along while the run stops: what it claimed is given back before run() returns", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const receiver = await startReceiver(async () => {
    await hold.wait;
    return new Response("ok");
  });
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  const stop = new AbortController();
  // 2 per endpoint: the first claim fills the endpoint, so the next rows can only come along with the
  // write that records the first two (their leases end in the same transaction).
  const engine = testEngine({ maxInFlight: 4, perEndpoint: 2, flushDelayMs: 0 });
  let turn: Promise<unknown> | undefined;
  const release = gate();
  try {
    await addMembers(tenant.organizationId, 6);
    const run = engine.run({ signal: stop.signal, pollMs: 60_000 });
    await receiver.waitFor(2);
    // Hold the claims' turn lock: the write that records the first two waits inside its claim.
    const locked = gate();
    turn = sql().begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtextextended('private.webhook_claim', 7306))`;
      locked.open();
      await release.wait;
    });
    await locked.wait;
    hold.open();
    await untilAdvisoryLockAwaited();
    stop.abort(); // the run ends while its write (and the claim along with it) is under way
    await new Promise((r) => setTimeout(r, 50));
    release.open();
    await turn;
    const stats = await run;
    const rows = await deliveriesOf(ep.id);
    const sent = receiver.requests.length;
    assertEquals(sent, 2, "nothing started after the stop");
    assertEquals(stats.claimed, sent + stats.released, "every claimed delivery was sent or given back");
    assert(stats.released > 0, `the write claimed along: ${JSON.stringify(stats)}`);
    assertEquals(stats.recorded, sent, "every sent delivery was recorded before run() returned");
    assertEquals(rows.filter((d) => d.status === "delivered").length, sent);
    assertEquals(rows.filter((d) => d.leased_until !== null).length, 0, "no lease left behind");
    assertEquals(rows.filter((d) => d.status === "pending").length, 6 - sent, "the rest untouched");
  } finally {
    hold.open();
    release.open();
    await turn?.catch(() => {});
    stop.abort();
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
