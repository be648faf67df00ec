// What the functions pg_net starts (webhook-dispatcher, mail-sender) share: the bearer check, and where
// a run goes once the request is answered. pg_net holds one transaction open until every request of
// its batch is answered, so on the Edge Runtime they answer 202 at once and work in the background.
import type { Context } from "hono";
import type { z } from "zod";
import { parseJson, readRawBody } from "./body.ts";
import { badRequest, serviceUnavailable, unauthorized } from "./errors.ts";
import { secretsEqual } from "./hmac.ts";

/** Runs a started piece of work after the response (Supabase's "Background Tasks"). */
export type Background = (work: Promise<unknown>) => void;

/** `EdgeRuntime.waitUntil` on Supabase's Edge Runtime; null under plain Deno. */
export function edgeRuntimeWaitUntil(): Background | null {
  const runtime = (globalThis as { EdgeRuntime?: { waitUntil?: Background } }).EdgeRuntime;
  return typeof runtime?.waitUntil === "function" ? (p) => runtime.waitUntil!(p) : null;
}

/**
 * Where a run goes: nowhere (awaited, 200) when the caller asked to `wait`, else the option given (null
 * awaits too), else the Edge Runtime's waitUntil where there is one.
 */
export function backgroundFor(
  wait: boolean | undefined,
  option: Background | null | undefined,
): Background | null {
  if (wait) return null;
  return option === undefined ? edgeRuntimeWaitUntil() : option;
}

/** `Authorization: Bearer <WEBHOOK_DISPATCH_SECRET>`, compared in constant time; throws 401 or 503. */
export function requireDispatchSecret(header: string | undefined, secret: string | undefined): void {
  // Without a configured secret nobody can be authenticated; that is our misconfiguration.
  if (!secret) throw serviceUnavailable("WEBHOOK_DISPATCH_SECRET is not configured");
  const bearer = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "")?.[1];
  if (!bearer || !secretsEqual(bearer, secret)) throw unauthorized();
}

/** A run's body: small JSON (empty means `{}`) read as `schema`; 400 naming what was `expected` otherwise. */
export async function runBody<S extends z.ZodType>(
  req: Request,
  schema: S,
  expected: string,
): Promise<z.infer<S>> {
  const raw = await readRawBody(req, 4096);
  const parsed = schema.safeParse(raw.byteLength ? parseJson(raw) : {});
  if (!parsed.success) throw badRequest("invalid_body", `Expected ${expected}`);
  return parsed.data;
}

/**
 * Answers a run: without `background`, awaits it and answers 200 with what it did; else hands it over,
 * logs how it ended as `name`, and answers 202 with `started`.
 */
export async function answerRun<T extends object>(
  c: Context,
  background: Background | null,
  run: () => Promise<T>,
  options: {
    name: string;
    log: (event: Record<string, unknown>) => void;
    started: Record<string, unknown>;
    /** The run is another request's, which logs its end: hand it over without logging it twice. */
    quiet?: boolean;
  },
): Promise<Response> {
  if (!background) return c.json(await run());
  background(
    options.quiet ? run().catch(() => {}) : run().then(
      (stats) => options.log({ level: "info", msg: `${options.name} finished`, ...stats }),
      (err) => options.log({ level: "error", msg: `${options.name} failed`, error: String(err) }),
    ),
  );
  return c.json({ started: true, ...options.started }, 202);
}
