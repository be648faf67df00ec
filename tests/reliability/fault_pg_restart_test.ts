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
import { closeSql, createTenant, sql } from "../helpers/db.ts";
import { testConfig, tokenFor } from "../helpers/tokens.ts";
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
    // Faults run one after another; a fault that fails is recorded (and fails the test), never skipped silently.
    const fault = (step: () => Promise<void>) => {
      faultRunning = faultRunning.then(step).catch((err) => {
        faults.push(`fault failed: ${(err as Error).message}`);
      });
    };
    const restart = (downMs: number) => async () => {
      await stopCluster(c);
      faults.push("postgres stopped (fast shutdown)");
      await new Promise((r) => setTimeout(r, downMs));
      await startCluster(c);
      faults.push("postgres started");
    };
    const inject = (n: number) => {
      if (n === injectAt[0]) fault(restart(1500));
      if (n === injectAt[1]) {
        fault(async () => {
          const killed = await terminateBackends("church-integration");
          faults.push(`pg_terminate_backend on ${killed} service connections`);
        });
      }
      if (n === injectAt[2]) fault(restart(500));
    };

    const started = performance.now();
    const watchdog = setInterval(() => {
      if (!server.alive()) {
        console.log(
          `fault-pg-restart: checkout-webhook exited (${server.exitCode()}), log ${server.logFile}`,
        );
      }
      console.log(
        `fault-pg-restart: ${done}/${REQUESTS} done after ${
          ((performance.now() - started) / 1000).toFixed(0)
        }s, faults ${faults.length}`,
      );
    }, 5000);
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
            // A request the service never answers counts as dropped, and is retried.
            const res = await fetch(url, {
              method: "POST",
              headers,
              body: p.body,
              signal: AbortSignal.timeout(15_000),
            });
            await res.body?.cancel();
            status = res.status;
          } catch {
            status = 0; // connection dropped: the provider sees no answer and retries
          }
          if (attempts === 1) firstStatus = status;
          // A crashed service answers nothing any more: stop at once rather than retry into the deadline.
          const gaveUp = Date.now() > deadline || !server.alive();
          if ((status >= 200 && status < 300) || (status >= 400 && status < 500) || gaveUp) {
            done++;
            return { firstStatus, attempts, finalStatus: status };
          }
          await new Promise((r) => setTimeout(r, Math.min(1000, 50 * attempts)));
        }
      });
      await faultRunning;
    } finally {
      clearInterval(watchdog);
      await faultRunning.catch(() => {});
      await ensureClusterRunning(c);
      await closeSql();
    }
    const seconds = (performance.now() - started) / 1000;

    // The same process answers again: no restart, no wedged connection.
    try {
      await waitHealthy(`${server.base}/health`, 20_000);
    } catch (err) {
      dumpLogs(server.logs());
      console.error(
        `checkout-webhook alive: ${server.alive()}, exit code ${server.exitCode()}, log ${server.logFile}`,
      );
      throw err;
    }
    assert(server.alive(), "checkout-webhook process still running");

    const rows = await sql()<{ key: string; n: number; status: string }[]>`
      select idempotency_key as key, count(*)::int as n, min(status) as status
      from public.inbound_webhook_log
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
      process_alive: server.alive(),
      seconds: Number(seconds.toFixed(1)),
    };
    console.log(`fault-pg-restart: ${JSON.stringify(report)}`);
    await server.stop();

    assert(report.process_alive, `checkout-webhook crashed; its log: ${server.logFile}`);
    assertEquals(faults.filter((f) => f.startsWith("fault failed")), [], "every fault was injected");
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

Deno.test({
  name:
    "configuration API (one transaction per request as the caller) through killed backends and a restart: no crash, no wedged connection",
  ignore: cluster === null,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const c = cluster!;
    const config = await testConfig();
    const tenant = await createTenant();
    const token = await tokenFor(tenant.admin, tenant.organizationId);
    const server = await spawnFunction("webhooks", { SUPABASE_JWKS: config.jwks!, DB_POOL_MAX: "8" });
    await closeSql();
    const url = `${server.base}/api-keys`;
    const headers = { authorization: `Bearer ${token}` };
    const get = async (): Promise<number> => {
      try {
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
        await res.body?.cancel();
        return res.status;
      } catch {
        return 0;
      }
    };

    // Load in the background while the faults happen.
    let stop = false;
    const during: number[] = [];
    const load = Promise.all(Array.from({ length: 16 }, async () => {
      while (!stop) during.push(await get());
    }));
    const faults: string[] = [];
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      await pause(800);
      for (let i = 0; i < 3; i++) {
        faults.push(
          `pg_terminate_backend on ${await terminateBackends("church-integration")} service connections`,
        );
        await closeSql();
        await pause(700);
      }
      await stopCluster(c);
      faults.push("postgres stopped (fast shutdown)");
      await pause(1500);
      await startCluster(c);
      faults.push("postgres started");
      await pause(1500);
    } finally {
      stop = true;
      await load;
      await ensureClusterRunning(c);
    }

    // After the faults: the same process, every request answered 200 (a wedged connection would time out).
    await waitHealthy(`${server.base}/health`, 20_000);
    const after = await pool(Array.from({ length: 400 }), 16, () => get());
    const failedAfter = after.filter((s) => s !== 200).length;
    const report = {
      requests_during_faults: during.length,
      non_200_during_faults: during.filter((s) => s !== 200).length,
      statuses_during_faults: histogram(during),
      faults,
      requests_after: after.length,
      failed_after: failedAfter,
      driver_guard_triggered: (server.logs().match(/db_connection_lost/g) ?? []).length,
      process_alive: server.alive(),
    };
    console.log(`fault-pg-restart api: ${JSON.stringify(report)}`);
    await server.stop();
    assert(report.process_alive, "webhooks process survived");
    assert(report.non_200_during_faults > 0, "the faults were felt");
    assertEquals(failedAfter, 0, "no wedged connection after the faults");
  },
});

/** On failure: what the service logged, grouped, and its last lines. */
function dumpLogs(logs: string) {
  const lines = logs.split("\n").filter((l) => l.trim() !== "");
  const groups: Record<string, number> = {};
  for (const l of lines) {
    const key = l.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "<id>").slice(0, 200);
    groups[key] = (groups[key] ?? 0) + 1;
  }
  console.error(JSON.stringify(groups, null, 1));
  console.error(lines.slice(-30).join("\n"));
}

function histogram(statuses: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of statuses) {
    out[s === 0 ? "dropped" : String(s)] = (out[s === 0 ? "dropped" : String(s)] ?? 0) + 1;
  }
  return out;
}

Deno.test("fault suite cleanup", async () => {
  if (cluster) await ensureClusterRunning(cluster);
  await closeSql();
});
