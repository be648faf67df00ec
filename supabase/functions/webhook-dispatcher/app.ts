// webhook-dispatcher: called every minute by pg_cron (through pg_net) on hosted Supabase, with
// `Authorization: Bearer <WEBHOOK_DISPATCH_SECRET>`. Each call delivers for a bounded stretch and
// answers before the Edge Function wall-clock limit with what it did.
//
//   POST /webhook-dispatcher   body (optional): {"budget_ms": 100000, "stop_when_idle": false,
//                                                 "max_deliveries": 3000}
import type { Hono } from "hono";
import { z } from "zod";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { parseJson, readRawBody } from "../_shared/body.ts";
import { badRequest, serviceUnavailable, unauthorized } from "../_shared/errors.ts";
import { bytesEqual } from "../_shared/hmac.ts";
import { DeliveryEngine, type EngineOptions } from "./engine.ts";

/**
 * Default time one invocation may take: inside the platform's 150 s wall clock and pg_net's 120 s
 * timeout, and longer than cron's minute, so consecutive invocations overlap and one is always
 * claiming (each stops claiming a timeout before its end).
 */
export const DEFAULT_BUDGET_MS = 100_000;
/**
 * Default deliveries per invocation: hosted Edge Functions get 2 s of CPU per request and a delivery
 * costs a few hundred microseconds, so one invocation stops well short of that. More backlog is met
 * with more invocations at once (private.webhook_invoke_dispatcher), which never collide.
 */
export const DEFAULT_MAX_DELIVERIES = 3000;

const RunBody = z.object({
  budget_ms: z.number().int().min(1000).max(140_000).optional(),
  stop_when_idle: z.boolean().optional(),
  max_deliveries: z.number().int().min(1).max(50_000).optional(),
}).strict();

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Constant-time check of the bearer secret (hashing first makes the lengths equal too). */
async function authorized(header: string | undefined, secret: string): Promise<boolean> {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  if (!match) return false;
  return bytesEqual(await digest(match[1]!), await digest(secret));
}

export function createDispatcherApp(deps: AppDeps, engineOptions: Partial<EngineOptions> = {}): Hono {
  const app = newApp("webhook-dispatcher", deps);
  app.post("/", async (c) => {
    const secret = deps.config.dispatchSecret;
    // Without a configured secret nobody can be authenticated; that is our misconfiguration.
    if (!secret) throw serviceUnavailable("WEBHOOK_DISPATCH_SECRET is not configured");
    if (!(await authorized(c.req.header("authorization"), secret))) throw unauthorized();
    const raw = await readRawBody(c.req.raw, 4096);
    const parsed = RunBody.safeParse(raw.byteLength ? parseJson(raw) : {});
    if (!parsed.success) {
      throw badRequest("invalid_body", "Expected {budget_ms?, stop_when_idle?, max_deliveries?}");
    }
    const budget = parsed.data.budget_ms ?? DEFAULT_BUDGET_MS;
    const engine = new DeliveryEngine(deps.sql, {
      allowPrivateTargets: deps.config.allowPrivateTargets,
      ...engineOptions,
    });
    const started = Date.now();
    // Stop claiming early enough that the last attempts time out and are recorded inside the budget.
    const deadline = started + Math.max(0, budget - engine.timeoutMs - 2000);
    const stats = await engine.run({
      deadline,
      stopWhenIdle: parsed.data.stop_when_idle ?? false,
      maxDeliveries: parsed.data.max_deliveries ?? DEFAULT_MAX_DELIVERIES,
      signal: c.req.raw.signal,
    });
    return c.json({ ...stats, duration_ms: Date.now() - started });
  });
  return app;
}

export function createApp(deps: AppDeps): Hono {
  return createDispatcherApp(deps);
}
