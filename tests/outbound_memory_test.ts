// A dispatcher's memory is bounded by bytes, not only rows. Run as a hosted Edge Function's heap allows
// (DENO_V8_FLAGS=--max-old-space-size=256), a dispatcher process gets 64 maximum-size bodies (256 KiB)
// due in one transaction, while another organization keeps creating members: its resident memory, read
// from /proc (not only its V8 heap), stays under 256 MB, it finishes cleanly, and the other
// organization's deliveries arrive throughout. With a byte budget of 4 MiB, no more than 16 of those
// bodies are ever in flight at once.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  addMembers,
  createEndpoint,
  deliveriesOf,
  retireEndpoints,
  spawnDispatcher,
} from "./helpers/outbound.ts";

const MAX_BODY = 256 * 1024;
const MIB = 1024 * 1024;

/** Peak resident memory (VmHWM) of a running process, in bytes; null once it is gone. */
function peakRss(pid: number): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

async function runDispatcher(env: Record<string, string>) {
  const child = spawnDispatcher({
    DENO_V8_FLAGS: "--max-old-space-size=256",
    DISPATCH_PER_ENDPOINT: "64",
    DISPATCH_IDLE_GRACE_MS: "1500",
    DISPATCH_POLL_MS: "100",
    ...env,
  }, "piped");
  let peak = 0;
  const sampler = setInterval(() => peak = Math.max(peak, peakRss(child.pid) ?? 0), 20);
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  clearInterval(sampler);
  return { status, stderr, peak };
}

Deno.test("64 maximum-size bodies due at once: the dispatcher stays under 256 MB and others' deliveries flow", async () => {
  const big = await createTenant();
  const other = await createTenant();
  let active = 0;
  let maxActive = 0;
  const bigReceiver = await startReceiver(async (req) => {
    active++;
    maxActive = Math.max(maxActive, active);
    await new Promise((r) => setTimeout(r, 200));
    active--;
    return new Response(req.body.byteLength > 200_000 ? "ok" : "small?");
  });
  const otherReceiver = await startReceiver();
  const epBig = await createEndpoint(big.organizationId, `${bigReceiver.url}/big`, ["member.created"]);
  const epOther = await createEndpoint(other.organizationId, `${otherReceiver.url}/other`, [
    "member.created",
  ]);
  const notes = "x".repeat(130_000); // row and delta: a body just under the maximum
  try {
    for (const budget of [undefined, 4 * MIB]) {
      const before = { big: bigReceiver.requests.length, other: otherReceiver.requests.length };
      maxActive = 0;
      await sql()`select private.webhook_enqueue('member.created', (
        select jsonb_agg(jsonb_build_object('organization_id', ${big.organizationId}::uuid,
                                            'row', jsonb_build_object('id', gen_random_uuid(), 'notes', ${notes}::text),
                                            'delta', jsonb_build_object('notes', ${notes}::text)))
        from generate_series(1, 64)))`;
      // The other organization's members keep coming while the big bodies go out.
      let feeding = true;
      let fed = 0;
      const feeder = (async () => {
        while (feeding && fed < 40) {
          await addMembers(other.organizationId, 1);
          fed++;
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      const run = await runDispatcher(budget ? { DISPATCH_MAX_IN_FLIGHT_BYTES: String(budget) } : {});
      feeding = false;
      await feeder;
      const label = budget ? "with a 4 MiB budget" : "with the default budget";
      assertEquals(run.status.code, 0, `${label}: finished cleanly: ${run.stderr.slice(-500)}`);
      assert(run.peak > 0 && run.peak < 256 * MIB, `${label}: peak RSS ${Math.round(run.peak / MIB)} MiB`);
      console.log(
        `${label}: peak RSS ${Math.round(run.peak / MIB)} MiB, at most ${maxActive} bodies in flight`,
      );

      const bigGot = bigReceiver.requests.slice(before.big);
      assertEquals(bigGot.length, 64);
      assert(bigGot.every((r) => r.body.byteLength > MAX_BODY - 4096 && r.body.byteLength <= MAX_BODY));
      if (budget) assert(maxActive <= budget / (MAX_BODY - 4096), `${maxActive} bodies in flight at once`);
      const otherGot = otherReceiver.requests.slice(before.other);
      assert(otherGot.length > 0, "the other organization's deliveries went out");
      assert(
        otherGot[0]!.receivedAt < Math.max(...bigGot.map((r) => r.receivedAt)),
        `${label}: the other organization's first delivery arrived before the last big body`,
      );
    }
    // The feeder's last members may have come after a run's last claim: one more run sends them.
    const last = await runDispatcher({});
    assertEquals(last.status.code, 0);
    const rows = await deliveriesOf(epOther.id);
    assert(rows.length > 0 && rows.every((d) => d.status === "delivered"), "every one of them delivered");
    assert((await deliveriesOf(epBig.id)).every((d) => d.status === "delivered"));
  } finally {
    await retireEndpoints(epBig.id, epOther.id);
    await Promise.all([bigReceiver.close(), otherReceiver.close()]);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
