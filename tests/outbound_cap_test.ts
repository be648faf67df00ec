// The per-endpoint cap holds across dispatchers, not only inside one: two dispatcher processes against
// one database and one slow receiver; the receiver itself counts how many requests it is answering at
// once, and another endpoint keeps flowing meanwhile.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { addMembers, createEndpoint, deliveriesOf, retireEndpoints } from "./helpers/outbound.ts";

const root = new URL("../", import.meta.url).pathname;

Deno.test("two dispatcher processes together never send an endpoint more than its cap at once", async () => {
  const tenant = await createTenant();
  const CAP = 4;
  const N = 40;
  let active = 0;
  let maxActive = 0;
  const slow = await startReceiver(async () => {
    maxActive = Math.max(maxActive, ++active);
    await new Promise((r) => setTimeout(r, 400));
    active--;
    return new Response("ok");
  });
  const fast = await startReceiver();
  const epSlow = await createEndpoint(tenant.organizationId, `${slow.url}/hook`, ["member.created"]);
  const epFast = await createEndpoint(tenant.organizationId, `${fast.url}/hook`, ["member.created"]);
  const children: Deno.ChildProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      children.push(
        new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-net", "--allow-env", "--allow-read", "tests/helpers/dispatch_child.ts"],
          cwd: root,
          // Small claims, so the two take turns from the start; both poll often and stay after going
          // idle, so they keep competing for the slow endpoint's slots until everything is delivered.
          env: {
            TEST_DATABASE_URL: testDbUrl(),
            DISPATCH_PER_ENDPOINT: String(CAP),
            // Each alone can hold fewer than the cap, so the slow endpoint reaches it only when both
            // send to it at once (and one cannot starve the other by re-claiming every freed slot
            // first); together they could hold 2 * (CAP - 1) > CAP, so the cap is what stops them.
            DISPATCH_MAX_IN_FLIGHT: String(CAP - 1),
            DISPATCH_CLAIM_BATCH: "5",
            DISPATCH_POLL_MS: "20",
            // Long enough that the first to start is still there when the work arrives, even when
            // the second takes seconds to start on a busy machine.
            DISPATCH_IDLE_GRACE_MS: "10000",
          },
          stdout: "piped",
          stderr: "null",
        }).spawn(),
      );
    }
    // Both running before there is any work, so both compete for it from the first claim on.
    const outputs = children.map((c) => {
      let out = "";
      let ready!: () => void;
      const started = new Promise<void>((r) => (ready = r));
      const done = (async () => {
        for await (const chunk of c.stdout.pipeThrough(new TextDecoderStream())) {
          out += chunk;
          if (out.includes("dispatching")) ready();
        }
        return out;
      })();
      return { started, done };
    });
    await Promise.all(outputs.map((o) => o.started));
    const started = Date.now();
    await addMembers(tenant.organizationId, N);
    await fast.waitFor(N, 30_000);
    await slow.waitFor(N, 60_000);
    const texts = await Promise.all(outputs.map((o) => o.done));
    const stats = texts.map((t) => JSON.parse(t.trim().split("\n").at(-1)!));
    assert(stats.every((s) => s.claimed > 0), `both dispatchers took part: ${JSON.stringify(stats)}`);
    // CAP at once needs both dispatchers sending to it together; more would break the shared cap.
    assertEquals(maxActive, CAP, "the slow endpoint had at most its cap in flight, and used it");
    // The fast endpoint (with the same cap) did not wait behind the slow one: it was done before
    // the slow one was half through (N / CAP rounds of 400 ms each).
    const fastDone = Math.max(...fast.requests.map((r) => r.receivedAt)) - started;
    const slowHalf = slow.requests[N / 2 - 1]!.receivedAt - started;
    assert(fastDone < slowHalf, `fast endpoint done at ${fastDone} ms, slow half through at ${slowHalf} ms`);
    for (const id of [epSlow.id, epFast.id]) {
      const rows = await deliveriesOf(id);
      assertEquals(rows.length, N);
      assert(rows.every((d) => d.status === "delivered" && d.attempt_count === 1), "each delivered once");
    }
  } finally {
    for (const c of children) {
      try {
        c.kill("SIGKILL");
      } catch { /* already exited */ }
    }
    await retireEndpoints(epSlow.id, epFast.id);
    await Promise.all([slow.close(), fast.close()]);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
