// webhook-dispatcher: `POST /webhook-dispatcher` from pg_net on hosted Supabase (the schedule:
// supabase/migrations/*_outbound_webhook_schedule.sql), `Authorization: Bearer <WEBHOOK_DISPATCH_SECRET>`;
// the body and the answers: docs/operations.md, "The dispatcher". A run stops by its CPU budget
// (budget.ts), its wall budget, or an optional row cap (`max_deliveries`, for tests and benchmarks).
//
// On the Edge Runtime it answers 202 at once and runs in the background (EdgeRuntime.waitUntil): pg_net
// starts nothing new until every request of its batch has finished, inside one transaction, so a request
// that took the whole run held a transaction open for a minute and delayed the next cron request. Where
// EdgeRuntime does not exist (the local Deno CLI, tests) or the body says `"wait": true`, it awaits the
// run and answers 200 with what it did.
import type { Hono } from "hono";
import { z } from "zod";
import { type AppDeps, newApp } from "../_shared/app.ts";
import type { Sql } from "../_shared/db.ts";
import { parseJson, readRawBody } from "../_shared/body.ts";
import { type Background, backgroundFor, requireDispatchSecret } from "../_shared/background.ts";
import { badRequest } from "../_shared/errors.ts";
import { DeliveryEngine, type EngineOptions, logToConsole, type RunStats } from "./engine.ts";

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

async function continueViaDatabase(sql: Sql): Promise<boolean | null> {
  const [row] = await sql<{ requested: boolean | null }[]>`
    select private.webhook_dispatch_continue() as requested`;
  return row?.requested ?? null;
}

export function createApp(deps: AppDeps, options: DispatcherOptions = {}): Hono {
  const app = newApp("webhook-dispatcher", deps);
  const log = options.log ?? logToConsole;
  const requestNext = options.requestNext ?? (() => continueViaDatabase(deps.sql));
  app.post("/", async (c) => {
    requireDispatchSecret(c.req.header("authorization"), deps.config.dispatchSecret);
    const raw = await readRawBody(c.req.raw, 4096);
    const parsed = RunBody.safeParse(raw.byteLength ? parseJson(raw) : {});
    if (!parsed.success) {
      throw badRequest(
        "invalid_body",
        "Expected {budget_ms?, stop_when_idle?, idle_grace_ms?, max_deliveries?, wait?}",
      );
    }
    const background = backgroundFor(parsed.data.wait, options.waitUntil);
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
