// The webhook-dispatcher as pg_net calls it on a hosted project: it answers 202 at once and delivers in
// the background (EdgeRuntime.waitUntil), so pg_net's request, and the transaction pg_net holds for its
// batch, last milliseconds; a run that stops at its cap with work still due asks for the next one; the
// runtime's shutdown stops a background run. Real database, real receivers on loopback; the test plays
// EdgeRuntime.waitUntil by collecting the promises it is handed.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { serveFunction } from "./helpers/server.ts";
import { createEndpoint, deliveriesOf, gate, retireEndpoints } from "./helpers/outbound.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp, type DispatcherOptions } from "../supabase/functions/webhook-dispatcher/app.ts";
import { edgeRuntimeWaitUntil } from "../supabase/functions/_shared/background.ts";

const secret = `dispatch-${crypto.randomUUID()}`;

function deps() {
  return {
    config: loadConfig({
      SUPABASE_DB_URL: testDbUrl(),
      WEBHOOK_DISPATCH_SECRET: secret,
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    }),
    sql: sql(),
  };
}

async function dispatcher(options: DispatcherOptions) {
  const background: Promise<unknown>[] = [];
  const logs: Record<string, unknown>[] = [];
  const fn = await serveFunction(
    "webhook-dispatcher",
    createApp(deps(), {
      log: (e) => logs.push(e),
      ...options,
      waitUntil: options.waitUntil === undefined ? (p) => background.push(p) : options.waitUntil,
    }),
  );
  const post = (body: unknown) =>
    fetch(fn.base, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: JSON.stringify(body),
      // A dispatcher that awaited its run would hang behind the held receiver: fail instead.
      signal: AbortSignal.timeout(10_000),
    });
  return { fn, post, background, logs };
}

/** `count` attendance.marked deliveries for the tenant's endpoints, due now. */
async function raise(organizationId: string, count: number): Promise<void> {
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name) values (${organizationId}, 'x') returning id`;
  await sql()`insert into public.attendance (organization_id, member_id)
              select ${organizationId}, ${m!.id} from generate_series(1, ${count})`;
}

Deno.test("plain Deno has no EdgeRuntime: the dispatcher awaits its run there", () => {
  assertEquals(edgeRuntimeWaitUntil(), null);
});

Deno.test("answers 202 before any delivery is sent, then delivers in the background", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const receiver = await startReceiver(async () => {
    await hold.wait;
    return new Response("ok");
  });
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  const d = await dispatcher({});
  try {
    await raise(tenant.organizationId, 3);
    const res = await d.post({ stop_when_idle: true, budget_ms: 20000 });
    assertEquals(res.status, 202);
    assertEquals(await res.json(), {
      started: true,
      budget_ms: 20000,
      max_deliveries: null,
      cpu_budget_ms: 2000,
      stop_when_idle: true,
    });
    assertEquals(d.background.length, 1, "the run was handed to waitUntil");
    // The receiver holds every request: nothing can have been delivered when the 202 came back.
    assert((await deliveriesOf(ep.id)).every((r) => r.status === "pending"), "nothing delivered yet");
    await receiver.waitFor(3);
    hold.open();
    await d.background[0];
    assertEquals((await deliveriesOf(ep.id)).map((r) => r.status), ["delivered", "delivered", "delivered"]);
    const finished = d.logs.find((e) => e.msg === "dispatch finished");
    assertEquals([finished?.claimed, finished?.delivered], [3, 3], JSON.stringify(d.logs));

    // `"wait": true` (an operator's manual run) awaits and reports even where waitUntil exists.
    await raise(tenant.organizationId, 1);
    const waited = await d.post({ stop_when_idle: true, wait: true });
    assertEquals(waited.status, 200);
    assertEquals((await waited.json()).delivered, 1);
    assertEquals(d.background.length, 1, "nothing more in the background");
  } finally {
    hold.open();
    await retireEndpoints(ep.id);
    await Promise.all([d.fn.close(), receiver.close()]);
  }
});

Deno.test("a woken run stays idle_grace_ms once idle, so work made meanwhile goes out in the same run", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  const d = await dispatcher({});
  try {
    await raise(tenant.organizationId, 1);
    const res = await d.post({ stop_when_idle: true, idle_grace_ms: 3000 });
    assertEquals(res.status, 202);
    await res.body?.cancel();
    await receiver.waitFor(1);
    // The run has drained; a delivery made now (a wake-up the database would debounce) is still its.
    await raise(tenant.organizationId, 1);
    await receiver.waitFor(2);
    await d.background[0];
    const finished = d.logs.find((e) => e.msg === "dispatch finished");
    assertEquals([finished?.claimed, d.background.length], [2, 1], JSON.stringify(d.logs));
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([d.fn.close(), receiver.close()]);
  }
});

Deno.test("a run that stops at its cap asks for the next one; a run that drained everything does not", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  let asked = 0;
  const d = await dispatcher({
    waitUntil: null,
    requestNext: () => Promise.resolve(++asked > 0),
  });
  // The default continuation, against this database (no pg_net here): it runs and requests nothing.
  const real = await dispatcher({ waitUntil: null });
  try {
    await raise(tenant.organizationId, 5);
    const capped = await d.post({ stop_when_idle: true, max_deliveries: 2 });
    assertEquals(capped.status, 200);
    const stats = await capped.json();
    assertEquals([stats.claimed, stats.continued, asked], [2, true, 1]);
    // Asked once, while it was still claiming (at half its cap), not after its last write.
    assert(stats.continued_at_ms <= stats.claiming_ms, JSON.stringify(stats));

    const rest = await d.post({ stop_when_idle: true, max_deliveries: 10 });
    const restStats = await rest.json();
    assertEquals(
      [restStats.claimed, "continued" in restStats, asked],
      [3, false, 1],
      JSON.stringify(restStats),
    );
    await receiver.waitFor(5);

    await raise(tenant.organizationId, 2);
    const viaDb = await real.post({ stop_when_idle: true, max_deliveries: 1 });
    const viaDbStats = await viaDb.json();
    assertEquals([viaDbStats.claimed, viaDbStats.continued], [1, null], "no pg_net: nothing to request");
    const [due] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_deliveries where endpoint_id = ${ep.id} and status = 'pending'`;
    assertEquals(due!.n, 1, "the rest waits for the next run");
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([d.fn.close(), real.fn.close(), receiver.close()]);
  }
});

Deno.test("the runtime's shutdown (beforeunload) stops a background run, which records what it sent", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  const shutdown = new AbortController();
  const d = await dispatcher({ shutdown: shutdown.signal });
  try {
    await raise(tenant.organizationId, 2);
    // A cron run: keeps polling for its whole 60 s budget unless stopped.
    const res = await d.post({ budget_ms: 60000 });
    assertEquals(res.status, 202);
    await res.body?.cancel();
    await receiver.waitFor(2);
    shutdown.abort();
    const ended = await Promise.race([
      d.background[0]!.then(() => "ended"),
      new Promise((r) => setTimeout(() => r("still running"), 10000)),
    ]);
    assertEquals(ended, "ended");
    assertEquals((await deliveriesOf(ep.id)).map((r) => r.status), ["delivered", "delivered"]);
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([d.fn.close(), receiver.close()]);
  }
});

Deno.test("a run stopped by the runtime's shutdown gives back what it has not sent and asks for its successor at once, which finds that work due", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver(async () => {
    await new Promise((r) => setTimeout(r, 100));
    return new Response("ok");
  });
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  // Paced: a claim holds about a second's worth of sends, most waiting for their turn when the stop comes.
  await sql()`update public.webhook_endpoints set rate_limit_per_second = 5 where id = ${ep.id}`;
  const shutdown = new AbortController();
  const dueWhenAsked: number[] = [];
  const d = await dispatcher({
    shutdown: shutdown.signal,
    // What private.webhook_dispatch_continue() looks at before it posts: due and not leased.
    requestNext: async () => {
      const [due] = await sql()<{ n: number }[]>`
        select count(*)::int as n from public.webhook_deliveries d
        where d.endpoint_id = ${ep.id} and d.status = 'pending' and d.next_attempt_at <= now()
          and not exists (select from private.webhook_live_leases l where l.delivery_id = d.id)`;
      dueWhenAsked.push(due!.n);
      return true;
    },
  });
  try {
    await raise(tenant.organizationId, 20);
    // The cron job's run: it would poll for its whole budget, asking for nobody, unless stopped.
    const res = await d.post({ budget_ms: 60000 });
    assertEquals(res.status, 202);
    await res.body?.cancel();
    await receiver.waitFor(2);
    shutdown.abort();
    await d.background[0];
    const finished = d.logs.find((e) => e.msg === "dispatch finished")!;
    assertEquals(finished.stopped, "signal", JSON.stringify(d.logs));
    assert((finished.released as number) > 0, `paced sends were given back: ${JSON.stringify(finished)}`);
    // Asked once, after it gave its leases back: the successor finds the rest due, not a minute later.
    assertEquals(dueWhenAsked, [20 - (finished.recorded as number)], JSON.stringify(finished));
    assertEquals(finished.continued, true);
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([d.fn.close(), receiver.close()]);
  }
});

Deno.test("runs posted to one isolate take turns: the next starts when the one going ends, and a third joins the one waiting", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver(async () => {
    await new Promise((r) => setTimeout(r, 100));
    return new Response("ok");
  });
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["attendance.marked"]);
  // Each run's end as logged, with the time it was logged.
  const ends: { at: number; claimed: number; waited_ms: number; duration_ms: number }[] = [];
  const d = await dispatcher({
    log: (e) => {
      if (e.msg === "dispatch finished") ends.push({ ...e, at: Date.now() } as typeof ends[number]);
    },
  });
  try {
    await raise(tenant.organizationId, 3);
    // A wake-up's run (it stays 1 s once idle), the next wake-up's, and a cron run meanwhile.
    const answers = [];
    for (
      const body of [{ stop_when_idle: true, idle_grace_ms: 1000 }, { stop_when_idle: true }, {
        stop_when_idle: true,
        idle_grace_ms: 500,
      }]
    ) {
      const res = await d.post(body);
      answers.push([res.status, (await res.json()).joined ?? false]);
    }
    assertEquals(answers, [[202, false], [202, false], [202, true]], "the third joined the one waiting");
    await Promise.all(d.background);
    assertEquals(ends.length, 2, `two runs, one after the other: ${JSON.stringify(ends)}`);
    const [first, second] = ends;
    assertEquals(first!.claimed, 3);
    // The first waited for nothing (a millisecond of the clock's rounding at most on a loaded machine).
    assert(first!.waited_ms < 50, JSON.stringify(first));
    // The second started when the first had ended (within a few ms), never beside it.
    const secondStarted = second!.at - second!.duration_ms + second!.waited_ms;
    assert(
      secondStarted >= first!.at - 20,
      `second started ${first!.at - secondStarted} ms before the first ended`,
    );
    assert(second!.waited_ms >= 1000, JSON.stringify(second));
    assertEquals((await deliveriesOf(ep.id)).map((r) => r.attempt_count), [1, 1, 1], "each sent once");
  } finally {
    await retireEndpoints(ep.id);
    await Promise.all([d.fn.close(), receiver.close()]);
  }
});

Deno.test("a run's body that is not what it expects is a 400 naming the fields; nothing starts", async () => {
  const d = await dispatcher({});
  const send = (body: string) =>
    fetch(d.fn.base, { method: "POST", headers: { authorization: `Bearer ${secret}` }, body });
  try {
    for (
      const body of ['{"budget_ms": "soon"}', '{"max_deliveries": 0}', '{"stop_when_idle": true, "rows": 5}']
    ) {
      const res = await send(body);
      assertEquals([res.status, await res.json()], [400, {
        error: {
          code: "invalid_body",
          message: "Expected {budget_ms?, stop_when_idle?, idle_grace_ms?, max_deliveries?, wait?}",
        },
      }], body);
    }
    const notJson = await send("run please");
    assertEquals([notJson.status, (await notJson.json()).error.code], [400, "invalid_json"]);
    const huge = await send(JSON.stringify({ wait: true, pad: "x".repeat(5000) }));
    assertEquals(huge.status, 413);
    await huge.body?.cancel();
    assertEquals(d.background.length, 0, "no run was handed to the background");
  } finally {
    await d.fn.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
