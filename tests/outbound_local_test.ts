// Local delivery: without pg_net, the dev server's engine wakes on the outbox triggers' NOTIFY, so a
// change made locally reaches its endpoint at once, not at the next poll.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  createEndpoint,
  deliveriesOf,
  gate,
  retireEndpoints,
  runOutLeases,
  testEngine,
} from "./helpers/outbound.ts";
import { NOTIFY_CHANNEL, startLocalDispatcher } from "../supabase/functions/webhook-dispatcher/local_loop.ts";
import { startDevStack } from "./helpers/dev_stack.ts";

Deno.test("the local loop delivers on NOTIFY, long before its poll would", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  // A ten-minute poll: within the minute given below, only the NOTIFY can deliver.
  const local = startLocalDispatcher(sql(), { allowPrivateTargets: true, pollMs: 600_000, log: () => {} });
  try {
    // Wait until the loop's LISTEN is in place (its connection's last statement), not for a guessed time.
    while (
      (await sql()`select 1 from pg_stat_activity where query ilike ${`listen%${NOTIFY_CHANNEL}%`}`)
        .length === 0
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const name of ["first", "second"]) {
      await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, ${name})`;
      const got = await receiver.waitFor(name === "first" ? 1 : 2, 60_000);
      assertEquals(JSON.parse(got.at(-1)!.text).data.row.first_name, name);
    }
  } finally {
    await local.stop();
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("the dev server delivers outbound webhooks locally and still shuts down cleanly", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["donation.recorded"]);
  const stack = await startDevStack();
  try {
    assert(stack.output().includes("delivering outbound webhooks locally"), stack.output());
    await new Promise((r) => setTimeout(r, 500));
    await sql()`insert into public.donations (organization_id, amount_minor, currency)
                values (${tenant.organizationId}, 1000, 'USD')`;
    const [req] = await receiver.waitFor(1, 3000);
    assertEquals(req!.headers.get("x-webhook-event"), "donation.recorded");
    // The result is written right after the send.
    for (let i = 0; i < 50 && (await deliveriesOf(ep.id))[0]!.status !== "delivered"; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals((await deliveriesOf(ep.id))[0]!.status, "delivered");
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
    await stack.stop(); // rejects unless the server exits 0 after SIGINT
  }
});

Deno.test("with the database down, the dev server still serves and stops promptly on SIGINT", async () => {
  const stack = await startDevStack({
    env: { SUPABASE_DB_URL: "postgresql://postgres@127.0.0.1:1/postgres" },
  });
  assert(stack.output().includes("delivering outbound webhooks locally"), stack.output());
  await new Promise((r) => setTimeout(r, 1500)); // a few failed claims and LISTEN attempts
  const started = Date.now();
  await stack.stop();
  assert(Date.now() - started < 5000, `stopped in ${Date.now() - started} ms`);
});

Deno.test("SIGTERM stops the dev server within seconds while a cron-style run polls and an attempt hangs", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const hanging = await startReceiver(async () => {
    await hold.wait;
    return new Response("late");
  });
  const ep = await createEndpoint(tenant.organizationId, `${hanging.url}/hook`, ["donation.recorded"]);
  const secret = `dispatch-${crypto.randomUUID()}`;
  const stack = await startDevStack({ env: { WEBHOOK_DISPATCH_SECRET: secret } });
  try {
    // What pg_cron does every minute: a run that keeps polling for its whole budget.
    const cron = fetch(`${stack.url}/functions/v1/webhook-dispatcher`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ budget_ms: 60_000 }),
    }).then((r) => r.body?.cancel()).catch(() => {});
    await sql()`insert into public.donations (organization_id, amount_minor, currency)
                values (${tenant.organizationId}, 1000, 'USD')`;
    await hanging.waitFor(1, 5000); // an attempt is in flight and will not be answered
    await new Promise((r) => setTimeout(r, 300));
    // Exit 0 within 6 s, else SIGKILL (and a rejection): the run had 60 s to go and the attempt 10 s
    // (the wait for it was what held the server: attempts in flight now get a second, then are cut).
    await stack.stop("SIGTERM", 6000);
    await cron;
    // Nothing lost: the delivery is still open (its attempt recorded as cut short, or its lease left to
    // run out), and a dispatcher after the restart delivers it.
    const [row] = await deliveriesOf(ep.id);
    assert(row!.status === "pending" || row!.status === "retrying", `still open: ${row!.status}`);
    hold.open();
    await runOutLeases([ep.id]);
    await sql()`update public.webhook_deliveries set next_attempt_at = now() where id = ${row!.id}`;
    await testEngine().run({ stopWhenIdle: true });
    assertEquals((await deliveriesOf(ep.id))[0]!.status, "delivered");
  } finally {
    hold.open();
    await stack.stop().catch(() => {});
    await retireEndpoints(ep.id);
    await hanging.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
