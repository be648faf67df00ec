// Fault suite: PostgreSQL stopped and started (and, separately, every backend of the service killed)
// while signed checkout webhooks arrive at load. checkout-webhook runs in its own process, as deployed.
// The provider is played the way providers behave: a 2xx ends a delivery, a 5xx or a dropped connection
// is retried with the same Idempotency-Key until it succeeds.
//
// Counted afterwards, per request: lost (no effect stored) and doubled (stored more than once) donations
// by gateway payment id, verified log rows by idempotency key, and each subscription's final state
// against the newest event sent for it. Both must be 0; the service must answer again without a restart.
//
//   FAULT_REQUESTS=<n>     requests per run (default 1200)
//   FAULT_CONCURRENCY=<n>  requests in flight (default 24)
import { assert, assertEquals } from "../helpers/assert.ts";
import { closeSql, sql } from "../helpers/db.ts";
import { createSubscription, paymentTenant } from "../helpers/payments.ts";
import { hmacSha256Hex } from "../../supabase/functions/_shared/hmac.ts";
import { spawnFunction } from "./child.ts";
import {
  ensureClusterRunning,
  startCluster,
  stopCluster,
  terminateBackends,
  testCluster,
} from "./cluster.ts";
import { pool, waitHealthy } from "./harness.ts";

const REQUESTS = Number(Deno.env.get("FAULT_REQUESTS") ?? 1200);
const CONCURRENCY = Number(Deno.env.get("FAULT_CONCURRENCY") ?? 24);
const SUBSCRIPTIONS = 40;
const RETRY_DEADLINE_MS = 90_000;
const cluster = await testCluster();

interface Planned {
  i: number;
  key: string;
  subscription: string;
  event: "charged" | "payment_failed";
  paymentId: string | null;
  occurredAt: string;
  body: string;
}

interface Sent {
  firstStatus: number;
  attempts: number;
  finalStatus: number;
}

Deno.test({
  name:
    "PostgreSQL restarted and backends killed under load: nothing lost, nothing doubled, service recovers",
  ignore: cluster === null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const c = cluster!;
    const tenant = await paymentTenant();
    const subs = await Promise.all(
      Array.from(
        { length: SUBSCRIPTIONS },
        () => createSubscription(tenant.organizationId, { status: "active" }),
      ),
    );
    const run = crypto.randomUUID().slice(0, 8);
    const base = Date.UTC(2026, 10, 22, 8, 0);
    const plan: Planned[] = Array.from({ length: REQUESTS }, (_, i) => {
      const sub = subs[i % SUBSCRIPTIONS]!;
      const event = Math.floor(i / SUBSCRIPTIONS) % 3 === 2 ? "payment_failed" : "charged";
      const paymentId = event === "charged" ? `pay_${run}_${i}` : null;
      const occurredAt = new Date(base + i * 1000).toISOString();
      const body = JSON.stringify({
        event,
        subscription_id: sub.gatewayId,
        occurred_at: occurredAt,
        ...(paymentId ? { payment: { id: paymentId, amount_minor: 50000, currency: "INR" } } : {}),
      });
      return { i, key: `evt_${run}_${i}`, subscription: sub.id, event, paymentId, occurredAt, body };
    });
    const signatures = await Promise.all(plan.map((p) => hmacSha256Hex(tenant.secret, p.body)));

    const server = await spawnFunction("checkout-webhook", { DB_POOL_MAX: "10" });
    const url = `${server.base}/${tenant.organizationId}`;
    // The suite's own pool must not hold connections across the restart.
    await closeSql();

    let done = 0;
    const faults: string[] = [];
    let faultRunning: Promise<void> = Promise.resolve();
    const injectAt = [Math.floor(REQUESTS * 0.2), Math.floor(REQUESTS * 0.5), Math.floor(REQUESTS * 0.75)];
    const inject = (n: number) => {
      if (n === injectAt[0]) {
        faultRunning = (async () => {
          await stopCluster(c);
          faults.push("postgres stopped (fast shutdown)");
          await new Promise((r) => setTimeout(r, 1500));
          await startCluster(c);
          faults.push("postgres started");
        })();
      } else if (n === injectAt[1]) {
        faultRunning = faultRunning.then(async () => {
          const killed = await terminateBackends("church-integration");
          faults.push(`pg_terminate_backend on ${killed} service connections`);
        });
      } else if (n === injectAt[2]) {
        faultRunning = faultRunning.then(async () => {
          await stopCluster(c);
          faults.push("postgres stopped (fast shutdown)");
          await new Promise((r) => setTimeout(r, 500));
          await startCluster(c);
          faults.push("postgres started");
        });
      }
    };

    const started = performance.now();
    let results: Sent[];
    try {
      results = await pool(plan, CONCURRENCY, async (p, idx) => {
        inject(idx);
        const headers = {
          "content-type": "application/json",
          "idempotency-key": p.key,
          "x-checkout-signature": signatures[p.i]!,
        };
        const deadline = Date.now() + RETRY_DEADLINE_MS;
        let attempts = 0;
        let firstStatus = 0;
        for (;;) {
          attempts++;
          let status: number;
          try {
            const res = await fetch(url, { method: "POST", headers, body: p.body });
            await res.body?.cancel();
            status = res.status;
          } catch {
            status = 0; // connection dropped: the provider sees no answer and retries
          }
          if (attempts === 1) firstStatus = status;
          if ((status >= 200 && status < 300) || (status >= 400 && status < 500) || Date.now() > deadline) {
            done++;
            return { firstStatus, attempts, finalStatus: status };
          }
          await new Promise((r) => setTimeout(r, Math.min(1000, 50 * attempts)));
        }
      });
      await faultRunning;
    } finally {
      await faultRunning.catch(() => {});
      await ensureClusterRunning(c);
    }
    const seconds = (performance.now() - started) / 1000;

    // The same process answers again: no restart, no wedged connection.
    await waitHealthy(`${server.base}/health`, 20_000);
    assert(server.alive(), "checkout-webhook process still running");

    const rows = await sql()<{ key: string; n: number; status: string }[]>`
      select idempotency_key as key, count(*)::int as n, min(status) as status
      from public.donation_payment_webhook_log
      where organization_id = ${tenant.organizationId} and signature_valid
      group by idempotency_key`;
    const logByKey = new Map(rows.map((r) => [r.key, r]));
    const donations = await sql()<{ id: string; n: number }[]>`
      select gateway_payment_id as id, count(*)::int as n from public.donations
      where organization_id = ${tenant.organizationId} group by gateway_payment_id`;
    const donationsById = new Map(donations.map((d) => [d.id, d.n]));
    const states = await sql()<{ id: string; status: string; last_event_at: Date }[]>`
      select id, status, last_event_at from public.recurring_donations
      where organization_id = ${tenant.organizationId}`;

    let lost = 0;
    let doubled = 0;
    const problems: string[] = [];
    for (const p of plan) {
      const log = logByKey.get(p.key);
      if (!log) {
        lost++;
        problems.push(`${p.key}: no log row`);
      } else if (log.n > 1) {
        doubled++;
        problems.push(`${p.key}: ${log.n} log rows`);
      } else if (log.status !== "processed") problems.push(`${p.key}: log row ${log.status}`);
      if (p.paymentId) {
        const n = donationsById.get(p.paymentId) ?? 0;
        if (n === 0) {
          lost++;
          problems.push(`${p.paymentId}: no donation`);
        }
        if (n > 1) {
          doubled++;
          problems.push(`${p.paymentId}: ${n} donations`);
        }
      }
    }
    const extraDonations = donations.filter((d) => !plan.some((p) => p.paymentId === d.id)).length;
    let wrongStates = 0;
    for (const s of states) {
      const newest = plan.filter((p) => p.subscription === s.id).at(-1)!;
      const expected = newest.event === "charged" ? "active" : "past_due";
      if (s.status !== expected || s.last_event_at.toISOString() !== newest.occurredAt) {
        wrongStates++;
        problems.push(
          `${s.id}: ${s.status} at ${s.last_event_at.toISOString()}, expected ${expected} at ${newest.occurredAt}`,
        );
      }
    }

    const first5xx = results.filter((r) => r.firstStatus >= 500 || r.firstStatus === 0).length;
    const retried = results.filter((r) => r.attempts > 1).length;
    const attempts = results.reduce((n, r) => n + r.attempts, 0);
    const unfinished = results.filter((r) => r.finalStatus < 200 || r.finalStatus >= 300).length;
    const driverGuard = (server.logs().match(/db_connection_lost/g) ?? []).length;
    const report = {
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      attempts,
      first_attempt_5xx_or_dropped: first5xx,
      retried,
      unfinished,
      faults,
      lost,
      doubled,
      extra_donations: extraDonations,
      wrong_subscription_states: wrongStates,
      driver_guard_triggered: driverGuard,
      seconds: Number(seconds.toFixed(1)),
    };
    console.log(`fault-pg-restart: ${JSON.stringify(report)}`);
    await server.stop();

    assertEquals(faults.length, 5, `all faults injected: ${faults.join(", ")}`);
    assert(first5xx > 0, "the faults were felt by some requests (else the test proves nothing)");
    assertEquals(unfinished, 0, "every request eventually succeeded");
    assertEquals(
      [lost, doubled, extraDonations, wrongStates],
      [0, 0, 0, 0],
      problems.slice(0, 20).join("\n"),
    );
    assertEquals(problems, []);
  },
});

Deno.test("fault suite cleanup", async () => {
  if (cluster) await ensureClusterRunning(cluster);
  await closeSql();
});
