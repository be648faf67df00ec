// Fault suite for outbound webhooks: dispatcher processes killed with SIGKILL in the middle of their
// batches, again and again, during a run of thousands of deliveries. tests/outbound_retry_test.ts shows
// one kill loses nothing; this runs many with counts. A killed dispatcher's leases run out (the test
// moves them to the past, as time would, and runs housekeeping), and the next dispatcher takes over.
//
// Counted: deliveries expected (events x subscribed endpoints), received at least once (lost = the
// rest), received more than once (duplicates: at-least-once delivery allows them; they are reported),
// rows not `delivered` at the end.
//
//   DISPATCH_EVENTS=<n>  events (default 1000, x3 endpoints)   DISPATCH_KILLS=<n>  kills (default 5)
import { assert, assertEquals } from "../helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "../helpers/db.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { createEndpoint, retireEndpoints } from "../helpers/outbound.ts";

const EVENTS = Number(Deno.env.get("DISPATCH_EVENTS") ?? 1000);
const KILLS = Number(Deno.env.get("DISPATCH_KILLS") ?? 5);
const root = new URL("../../", import.meta.url).pathname;

function spawnDispatcher(): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--no-check",
      "tests/helpers/dispatch_child.ts",
    ],
    cwd: root,
    env: { TEST_DATABASE_URL: testDbUrl() },
    stdout: "null",
    stderr: "null",
  }).spawn();
}

Deno.test({
  name: "dispatchers killed with SIGKILL mid-batch, repeatedly: every event reaches every endpoint",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const tenant = await createTenant();
    // A few milliseconds per request keeps every dispatcher mid-batch when it is killed.
    const receiver = await startReceiver(async () => {
      await new Promise((r) => setTimeout(r, 3));
      return new Response("ok");
    });
    const endpoints = await Promise.all(
      ["one", "two", "three"].map((p) =>
        createEndpoint(tenant.organizationId, `${receiver.url}/${p}`, ["member.created"])
      ),
    );
    const ids = endpoints.map((e) => e.id);
    const expected = EVENTS * endpoints.length;
    try {
      await sql()`insert into public.members (organization_id, first_name)
                  select ${tenant.organizationId}, 'm' || g from generate_series(1, ${EVENTS}::int) g`;
      const kills: { afterReceived: number; signal: string | null }[] = [];
      for (let k = 0; k < KILLS; k++) {
        const before = receiver.requests.length;
        const child = spawnDispatcher();
        // Kill once this dispatcher has sent a share of the work (or after 5 s, whatever it managed).
        const target = Math.min(expected, before + Math.ceil(expected / (KILLS + 2)));
        await receiver.waitFor(target, 5_000).catch(() => {});
        child.kill("SIGKILL");
        const status = await child.status;
        kills.push({ afterReceived: receiver.requests.length, signal: status.signal });
        // The leases of the dead dispatcher run out; housekeeping makes their rows due again.
        await sql()`update public.webhook_deliveries
                    set next_attempt_at = now() - interval '1 second', leased_until = now() - interval '1 second'
                    where endpoint_id = any(${ids}::uuid[]) and leased_until > now()`;
        await sql()`select private.webhook_housekeeping()`;
      }
      // The last dispatcher runs to the end.
      const last = spawnDispatcher();
      const lastStatus = await last.status;
      assertEquals(lastStatus.code, 0, "the last dispatcher finished cleanly");
      await receiver.waitFor(expected, 10_000).catch(() => {});

      const seen = new Map<string, number>();
      for (const r of receiver.requests) {
        const key = `${r.path} ${r.headers.get("webhook-id")}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      const [counts] = await sql()<{ open: number; rows: number }[]>`
        select count(*) filter (where status <> 'delivered')::int as open, count(*)::int as rows
        from public.webhook_deliveries where endpoint_id = any(${ids}::uuid[])`;
      const { open, rows } = counts!;
      const report = {
        events: EVENTS,
        endpoints: endpoints.length,
        expected_deliveries: expected,
        delivery_rows: rows,
        kills: kills.length,
        killed_after_received: kills.map((k) => k.afterReceived),
        requests_received: receiver.requests.length,
        delivered_at_least_once: seen.size,
        lost: expected - seen.size,
        duplicates: receiver.requests.length - seen.size,
        not_delivered_rows: open,
      };
      console.log(`fault-dispatcher-kill: ${JSON.stringify(report)}`);
      assert(kills.every((k) => k.signal === "SIGKILL"), "every kill landed");
      assert(
        kills.some((k, i) => k.afterReceived > (kills[i - 1]?.afterReceived ?? 0)),
        "the dispatchers made progress",
      );
      assert(kills.at(-1)!.afterReceived < expected, "the last kill still left work (it was mid-run)");
      assertEquals(rows, expected);
      assertEquals([report.lost, report.not_delivered_rows], [0, 0]);
    } finally {
      await retireEndpoints(...ids);
      await receiver.close();
    }
  },
});

Deno.test({
  name: "three dispatcher processes racing on one queue: no delivery in flight twice, none sent twice",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const tenant = await createTenant();
    const active = new Map<string, number>();
    const seen = new Map<string, number>();
    let overlap = 0;
    const receiver = await startReceiver(async (req) => {
      const key = `${req.path} ${req.headers.get("webhook-id")}`;
      active.set(key, (active.get(key) ?? 0) + 1);
      seen.set(key, (seen.get(key) ?? 0) + 1);
      if (active.get(key)! > 1) overlap++;
      await new Promise((r) => setTimeout(r, 2));
      active.set(key, active.get(key)! - 1);
      return new Response("ok");
    });
    const endpoints = await Promise.all(
      ["a", "b"].map((p) =>
        createEndpoint(tenant.organizationId, `${receiver.url}/${p}`, ["member.created"])
      ),
    );
    const ids = endpoints.map((e) => e.id);
    const expected = EVENTS * endpoints.length;
    try {
      await sql()`insert into public.members (organization_id, first_name)
                  select ${tenant.organizationId}, 'm' || g from generate_series(1, ${EVENTS}::int) g`;
      const children = Array.from({ length: 3 }, () => spawnDispatcher());
      const statuses = await Promise.all(children.map((c) => c.status));
      await receiver.waitFor(expected, 10_000).catch(() => {});
      const [counts] = await sql()<{ open: number }[]>`
        select count(*) filter (where status <> 'delivered')::int as open
        from public.webhook_deliveries where endpoint_id = any(${ids}::uuid[])`;
      const report = {
        dispatchers: children.length,
        expected_deliveries: expected,
        requests_received: receiver.requests.length,
        concurrent_double_sends: overlap,
        lost: expected - seen.size,
        sent_twice: [...seen.values()].filter((n) => n > 1).length,
        not_delivered_rows: counts!.open,
      };
      console.log(`fault-dispatcher-race: ${JSON.stringify(report)}`);
      assert(statuses.every((s) => s.code === 0), "every dispatcher finished cleanly");
      assertEquals(
        [report.concurrent_double_sends, report.lost, report.sent_twice, report.not_delivered_rows],
        [0, 0, 0, 0],
      );
    } finally {
      await retireEndpoints(...ids);
      await receiver.close();
    }
  },
});

Deno.test("dispatcher fault cleanup", async () => {
  await closeSql();
});
