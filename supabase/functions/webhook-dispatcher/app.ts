// webhook-dispatcher: called by pg_net on hosted Supabase (the every-minute cron job, the wake-up
// trigger on new deliveries, and an invocation that stopped at its budget with work still due), with
// `Authorization: Bearer <WEBHOOK_DISPATCH_SECRET>`.
//
//   POST /webhook-dispatcher   body (optional): {"budget_ms": 70000, "stop_when_idle": false,
//                                                 "idle_grace_ms": 0, "max_deliveries": null,
//                                                 "wait": false}
//
// Each invocation measures its own CPU time and stops claiming with a margin before the plan's CPU
// limit (WEBHOOK_DISPATCH_CPU_BUDGET_MS, budget.ts), and its wall time against `budget_ms` (at most
// WEBHOOK_DISPATCH_WALL_BUDGET_MS); `max_deliveries` caps its rows too, if given (tests and benchmarks;
// the schedule's posts pass none). A run that stopped at its CPU budget or row cap with work still due
// asks for the next one at once.
//
// On the Edge Runtime it answers 202 at once and runs in the background (EdgeRuntime.waitUntil,
// Supabase's "Background Tasks"): pg_net sends a batch of queued requests and starts nothing new until
// every request of the batch has finished, inside one transaction, so a request that took the whole run
// held a transaction open for a minute and more and delayed the next cron request. Where EdgeRuntime
// does not exist (the local Deno CLI, tests) or the body says `"wait": true`, it awaits the run and
// answers 200 with what it did.
import type { Hono } from "hono";
import { z } from "zod";
import { type AppDeps, newApp } from "../_shared/app.ts";
import type { Sql } from "../_shared/db.ts";
import { parseJson, readRawBody } from "../_shared/body.ts";
import { badRequest, serviceUnavailable, unauthorized } from "../_shared/errors.ts";
import { secretsEqual } from "../_shared/hmac.ts";
import { DeliveryEngine, type EngineOptions, type RunStats } from "./engine.ts";

/**
 * Default time one invocation may take. The hosted wall clock is per worker (150 s on the free plan,
 * 400 s on paid plans) and a worker may serve the next minute's request too, so two 70 s runs fit in
 * one worker's life; cron starts one a minute, so they overlap by a few seconds and one is always
 * claiming or about to (each stops claiming a timeout before its end).
 */
export const DEFAULT_BUDGET_MS = 70_000;

const RunBody = z.object({
  budget_ms: z.number().int().min(1000).max(140_000).optional(),
  stop_when_idle: z.boolean().optional(),
  idle_grace_ms: z.number().int().min(0).max(10_000).optional(),
  max_deliveries: z.number().int().min(1).max(50_000).optional(),
  wait: z.boolean().optional(),
}).strict();

type Background = (work: Promise<unknown>) => void;

export interface DispatcherOptions {
  engine?: Partial<EngineOptions>;
  /**
   * Runs a started dispatch in the background (the response is 202); null awaits it (200). Default:
   * `EdgeRuntime.waitUntil` where the Edge Runtime provides it, else null.
   */
  waitUntil?: Background | null;
  /**
   * Asks for one more invocation after a run stopped at its budget; resolves true when one was requested.
   * Default: private.webhook_dispatch_continue() (pg_net; null without it, as in a local database).
   */
  requestNext?: () => Promise<boolean | null>;
  /** Aborted when the runtime is about to shut the worker down (`beforeunload`): stop claiming. */
  shutdown?: AbortSignal;
  log?: (event: Record<string, unknown>) => void;
}

/** Constant-time check of the bearer secret. */
function authorized(header: string | undefined, secret: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  return match !== null && secretsEqual(match[1]!, secret);
}

/** `EdgeRuntime.waitUntil` on Supabase's Edge Runtime; undefined under plain Deno. */
export function edgeRuntimeWaitUntil(): Background | null {
  const runtime = (globalThis as { EdgeRuntime?: { waitUntil?: Background } }).EdgeRuntime;
  return typeof runtime?.waitUntil === "function" ? (p) => runtime.waitUntil!(p) : null;
}

async function continueViaDatabase(sql: Sql): Promise<boolean | null> {
  const [row] = await sql<{ requested: boolean | null }[]>`
    select private.webhook_dispatch_continue() as requested`;
  return row?.requested ?? null;
}

export function createDispatcherApp(deps: AppDeps, options: DispatcherOptions = {}): Hono {
  const app = newApp("webhook-dispatcher", deps);
  const log = options.log ?? ((e: Record<string, unknown>) => console.error(JSON.stringify(e)));
  const requestNext = options.requestNext ?? (() => continueViaDatabase(deps.sql));
  app.post("/", async (c) => {
    const secret = deps.config.dispatchSecret;
    // Without a configured secret nobody can be authenticated; that is our misconfiguration.
    if (!secret) throw serviceUnavailable("WEBHOOK_DISPATCH_SECRET is not configured");
    if (!authorized(c.req.header("authorization"), secret)) throw unauthorized();
    const raw = await readRawBody(c.req.raw, 4096);
    const parsed = RunBody.safeParse(raw.byteLength ? parseJson(raw) : {});
    if (!parsed.success) {
      throw badRequest(
        "invalid_body",
        "Expected {budget_ms?, stop_when_idle?, idle_grace_ms?, max_deliveries?, wait?}",
      );
    }
    const background = parsed.data.wait
      ? null
      : options.waitUntil === undefined
      ? edgeRuntimeWaitUntil()
      : options.waitUntil;
    const budget = Math.min(parsed.data.budget_ms ?? DEFAULT_BUDGET_MS, deps.config.dispatchWallBudgetMs);
    const maxDeliveries = parsed.data.max_deliveries;
    const cpuBudgetMs = deps.config.dispatchCpuBudgetMs;
    const stopWhenIdle = parsed.data.stop_when_idle ?? false;
    const engine = new DeliveryEngine(deps.sql, {
      allowPrivateTargets: deps.config.allowPrivateTargets,
      ...options.engine,
    });
    const started = Date.now();
    // Stop claiming early enough that the last attempts time out and are recorded inside the budget.
    const deadline = started + Math.max(0, budget - engine.timeoutMs - 2000);
    // In the background the request is over once answered: only the runtime's shutdown stops the run.
    const signal = background
      ? options.shutdown
      : options.shutdown
      ? AbortSignal.any([options.shutdown, c.req.raw.signal])
      : c.req.raw.signal;
    const run = async () => {
      const stats: RunStats & { continued?: boolean | null } = await engine.run({
        deadline,
        stopWhenIdle,
        idleGraceMs: parsed.data.idle_grace_ms,
        maxDeliveries,
        cpuBudgetMs,
        signal,
      });
      // Stopped at its budget: more is probably due, and waiting for the next cron minute would leave it
      // sitting while capacity is idle. The database decides (only if something is due, only with pg_net).
      if ((stats.stopped === "cpu" || stats.stopped === "rows") && !signal?.aborted) {
        stats.continued = await requestNext().catch((err) => {
          log({ level: "error", msg: "could not request the next dispatcher run", error: String(err) });
          return null;
        });
      }
      return { ...stats, duration_ms: Date.now() - started };
    };
    if (!background) return c.json(await run());
    background(
      run().then(
        (stats) => log({ level: "info", msg: "dispatch finished", ...stats }),
        (err) => log({ level: "error", msg: "dispatch failed", error: String(err) }),
      ),
    );
    return c.json({
      started: true,
      budget_ms: budget,
      max_deliveries: maxDeliveries ?? null,
      cpu_budget_ms: cpuBudgetMs,
      stop_when_idle: stopWhenIdle,
    }, 202);
  });
  return app;
}

export function createApp(deps: AppDeps, options: DispatcherOptions = {}): Hono {
  return createDispatcherApp(deps, options);
}
