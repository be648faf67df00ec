// webhook-dispatcher: `POST /webhook-dispatcher` from pg_net (the schedule:
// supabase/migrations/*_outbound_webhook_schedule.sql), `Authorization: Bearer <WEBHOOK_DISPATCH_SECRET>`.
// On the Edge Runtime it answers 202 and runs in the background (pg_net holds a transaction open until
// its whole batch is answered); under plain Deno or with `"wait": true` it answers 200 with what it did.
// A run stops at its CPU budget (budget.ts), its wall budget, or an optional row cap (`max_deliveries`,
// for tests and benchmarks); one run at a time per isolate (one_run.ts). The body and the answers:
// docs/monitoring.md#the-dispatcher.
import type { Hono } from "hono";
import { z } from "zod";
import { type AppDeps, newApp } from "../_shared/app.ts";
import {
  answerRun,
  type Background,
  backgroundFor,
  requireDispatchSecret,
  runBody,
} from "../_shared/background.ts";
import { DeliveryEngine, type EngineOptions, logToConsole, type RunStats } from "./engine.ts";
import { OneRunAtATime, type RunPlan } from "./one_run.ts";

/** What a run answers (200) or logs (`dispatch finished`). */
type DispatchStats = RunStats & {
  continued?: boolean | null;
  continued_at_ms?: number;
  /** How long it waited for the run before it in this isolate (one_run.ts). */
  waited_ms?: number;
  duration_ms?: number;
};

/**
 * Default time one invocation may take. A worker lives 150 s (free plan) or 400 s and may serve the next
 * minute's request too: two 70 s runs fit, and runs started a minute apart overlap by a few seconds.
 */
export const DEFAULT_BUDGET_MS = 70_000;

/** How often a run that stops when idle looks for work while idle (the cron run: every second). */
export const IDLE_POLL_MS = 200;

const RunBody = z.object({
  budget_ms: z.number().int().min(1000).max(140_000).optional(),
  stop_when_idle: z.boolean().optional(),
  idle_grace_ms: z.number().int().min(0).max(10_000).optional(),
  max_deliveries: z.number().int().min(1).max(50_000).optional(),
  wait: z.boolean().optional(),
}).strict();

export interface DispatcherOptions {
  engine?: Partial<EngineOptions>;
  /** Runs a started dispatch in the background (202); null awaits it (200). Default: EdgeRuntime.waitUntil. */
  waitUntil?: Background | null;
  /**
   * Asks for one more invocation after a run stopped at its budget; true when one was requested.
   * Default: private.webhook_dispatch_continue() (pg_net; null without it, as in a local database).
   */
  requestNext?: () => Promise<boolean | null>;
  /** Aborted when the runtime is about to shut the worker down (`beforeunload`): stop claiming. */
  shutdown?: AbortSignal;
  log?: (event: Record<string, unknown>) => void;
}

export function createApp(deps: AppDeps, options: DispatcherOptions = {}): Hono {
  const app = newApp("webhook-dispatcher", deps);
  const log = options.log ?? logToConsole;
  const requestNext = options.requestNext ?? (async () =>
    (await deps.sql<{ requested: boolean | null }[]>`
      select private.webhook_dispatch_continue() as requested`)[0]?.requested ?? null);
  const runs = new OneRunAtATime<DispatchStats>();
  app.post("/", async (c) => {
    requireDispatchSecret(c.req.header("authorization"), deps.config.dispatchSecret);
    const body = await runBody(
      c.req.raw,
      RunBody,
      "{budget_ms?, stop_when_idle?, idle_grace_ms?, max_deliveries?, wait?}",
    );
    const background = backgroundFor(body.wait, options.waitUntil);
    const plan: RunPlan = {
      budgetMs: Math.min(body.budget_ms ?? DEFAULT_BUDGET_MS, deps.config.dispatchWallBudgetMs),
      stopWhenIdle: body.stop_when_idle ?? false,
      idleGraceMs: body.idle_grace_ms,
      maxDeliveries: body.max_deliveries,
    };
    const cpuBudgetMs = deps.config.dispatchCpuBudgetMs;
    // In the background the request is over once answered: only the runtime's shutdown stops the run.
    const signals = [options.shutdown, background ? undefined : c.req.raw.signal].filter((s) =>
      s !== undefined
    );
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const posted = Date.now();
    const run = async (plan: RunPlan): Promise<DispatchStats> => {
      const engine = new DeliveryEngine(deps.sql, {
        allowPrivateTargets: deps.config.allowPrivateTargets,
        ...options.engine,
      });
      const started = Date.now();
      // The successor, asked for once: shortly before the budget is spent (budget.ts handOver), else when
      // the run stops on its budget. pg_net takes a request up within about a second, so one asked for at
      // the end started a second or more after this run stopped claiming; this one is running by then.
      let next: Promise<boolean | null> | undefined;
      let nextAtMs: number | undefined;
      /** `atMs`: when, counted from the run's start as claiming_ms is (the engine's hand-over says). */
      const askNext = (atMs = Date.now() - started) => {
        nextAtMs ??= atMs;
        return next ??= requestNext().catch((err) => {
          log({ level: "error", msg: "could not request the next dispatcher run", error: String(err) });
          return null;
        });
      };
      const stats: DispatchStats = await engine.run({
        // Stop claiming early enough that the last attempts time out and are recorded inside the budget.
        deadline: started + Math.max(0, plan.budgetMs - engine.timeoutMs - 2000),
        stopWhenIdle: plan.stopWhenIdle,
        idleGraceMs: plan.idleGraceMs,
        // A run waiting out its idle grace looks often: a successor started while its predecessor holds
        // the organizations' caps takes over the moment those leases end, not up to a second later.
        pollMs: plan.stopWhenIdle ? IDLE_POLL_MS : undefined,
        maxDeliveries: plan.maxDeliveries,
        cpuBudgetMs,
        signal,
        onHandOver: (atMs) => void askNext(atMs),
      });
      // Stopped at its budget, or by the runtime's shutdown notice (what it gave back is due again at
      // once): more is probably due, and the next cron minute would leave it waiting while capacity is
      // idle. The database decides (only if something is due, only with pg_net); a stopping worker takes
      // no new request, so the successor starts in another. Asked again if nothing was due when it handed
      // over (this run held it all then). A run stopped before it claimed anything (it was waiting for
      // the one before it) leaves that to the one before it.
      const stopping = stats.stopped === "signal" && stats.claimed > 0;
      if (stats.stopped === "cpu" || stats.stopped === "rows" || stopping) {
        if ((await next) === false) next = undefined;
        stats.continued = await askNext();
      } else if (next) stats.continued = await next;
      if (nextAtMs !== undefined) stats.continued_at_ms = nextAtMs;
      return { ...stats, waited_ms: started - posted, duration_ms: Date.now() - posted };
    };
    const submitted = runs.submit(plan, run);
    return answerRun(c, background, () => submitted.result, {
      name: "dispatch",
      log,
      // A request that joined a waiting run logs nothing of its own: that run's end is logged once.
      quiet: submitted.joined,
      started: {
        budget_ms: plan.budgetMs,
        max_deliveries: plan.maxDeliveries ?? null,
        cpu_budget_ms: cpuBudgetMs,
        stop_when_idle: plan.stopWhenIdle,
        ...(submitted.joined ? { joined: true } : {}),
      },
    });
  });
  return app;
}
