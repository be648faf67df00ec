// A hosted invocation has a CPU-time limit (2 s on Supabase, background work included); the dispatcher
// measures its own and stops claiming before it. Here the limit is throttled to 40 ms, far below what
// 600 deliveries cost: the run must end by itself, cleanly (every delivery it claimed sent and recorded,
// no lease left, the rest untouched) and ask for the next run; the next runs deliver the rest. The runs
// are posted exactly as the schedule posts them (supabase/tests/22_hosted_dispatch.test.sql checks those
// bodies): with no row cap, so only the budget can have ended them.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { serveFunction } from "./helpers/server.ts";
import { allDelivered, createEndpoint, deliveriesOf, retireEndpoints } from "./helpers/outbound.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp } from "../supabase/functions/webhook-dispatcher/app.ts";

const TOTAL = 600;

Deno.test("a run with a tiny CPU budget stops claiming, records all it claimed and asks for the next run", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  const secret = `dispatch-${crypto.randomUUID()}`;
  const config = loadConfig({
    SUPABASE_DB_URL: testDbUrl(),
    WEBHOOK_DISPATCH_SECRET: secret,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOK_DISPATCH_CPU_BUDGET_MS: "40",
  });
  let asked = 0;
  const fn = await serveFunction(
    "webhook-dispatcher",
    createApp({ config, sql: sql() }, {
      waitUntil: null,
      requestNext: () => Promise.resolve(++asked > 0),
      log: () => {},
    }),
  );
  const post = async (body: Record<string, unknown>) => {
    const res = await fetch(fn.base, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assertEquals(res.status, 200);
    return await res.json();
  };
  try {
    const [m] = await sql()<{ id: string }[]>`
      insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x') returning id`;
    await sql()`insert into public.attendance (organization_id, member_id)
                select ${tenant.organizationId}, ${m!.id} from generate_series(1, ${TOTAL}::int)`;
    // The cron job's run (private.webhook_invoke_dispatcher): it would keep polling for 70 s; the CPU
    // budget ends it.
    const first = await post({});
    assertEquals(first.stopped, "cpu", JSON.stringify(first));
    assert(first.claimed >= 1 && first.claimed < TOTAL, `claimed part of the work: ${first.claimed}`);
    assertEquals([first.recorded, first.continued, asked], [first.claimed, true, 1], JSON.stringify(first));
    const rows = await deliveriesOf(ep.id);
    assertEquals(rows.filter((d) => d.status === "delivered").length, first.claimed);
    assertEquals(
      rows.filter((d) => d.status === "pending" && d.attempt_count === 0).length,
      TOTAL - first.claimed,
    );
    assertEquals(rows.filter((d) => d.leased_until !== null).length, 0, "no lease left behind");
    assertEquals(receiver.requests.length, first.claimed, "sent exactly what it claimed");
    // What the continuation (private.webhook_dispatch_continue) posts: more runs, each ending the same
    // way, until nothing is left.
    let runs = 1;
    for (let last = first; last.stopped === "cpu"; runs++) last = await post({ stop_when_idle: true });
    await allDelivered(ep.id, TOTAL, Date.now(), 5000);
    assertEquals(receiver.requests.length, TOTAL, `each sent once, in ${runs} runs`);
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([fn.close(), receiver.close()]);
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
