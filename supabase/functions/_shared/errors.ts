// Errors are values: a status, a stable machine-readable code and a message that is safe to show the
// caller. They are mapped to HTTP in exactly one place (`errorResponse`).
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { resetPools } from "./db.ts";

export class AppError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Response headers the error implies (Retry-After of a 429, say). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const badRequest = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(400, code, message, details);
export const unauthorized = (code = "unauthorized", message = "Missing or invalid credentials") =>
  new AppError(401, code, message);
export const forbidden = (code = "forbidden", message = "Not allowed") => new AppError(403, code, message);
export const notFound = (code = "not_found", message = "Not found") => new AppError(404, code, message);
export const payloadTooLarge = (limit: number) =>
  new AppError(413, "payload_too_large", `Request body exceeds ${limit} bytes`);
export const serviceUnavailable = (message = "Temporarily unavailable, retry later") =>
  new AppError(503, "service_unavailable", message);

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** Connection-level failures of PostgreSQL mean "retry later", never "your request is wrong". */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; errno?: string } | null;
  const code = e?.code ?? "";
  return [
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "EPIPE",
    "CONNECTION_CLOSED",
    "CONNECTION_ENDED",
    "CONNECTION_DESTROYED",
    "CONNECT_TIMEOUT",
    "57P01", // admin_shutdown
    "57P02", // crash_shutdown
    "57P03", // cannot_connect_now
    "08000",
    "08001",
    "08003",
    "08006",
    "53300", // too_many_connections
  ].includes(code) || err instanceof Deno.errors.ConnectionRefused;
}

/** The database refused our login (28P01 wrong password, 28000 not permitted to log in): ours to fix. */
export function isDatabaseLoginRefused(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === "28P01" || code === "28000";
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseLoginRefused(err)) {
    // 503, so callers retry: nothing is wrong with their request. The log says what to fix (the health
    // check says it too).
    return new AppError(
      503,
      "database_login_failed",
      "The service cannot log in to its database; retry later",
    );
  }
  if (isDatabaseUnavailable(err)) {
    // A connection that failed this way may be wedged inside the driver: start the pools afresh.
    resetPools();
    return serviceUnavailable();
  }
  return new AppError(500, "internal_error", "Internal error");
}

/** The one place where an error value becomes an HTTP response. */
export function errorResponse(c: Context, err: unknown): Response {
  const appErr = toAppError(err);
  if (appErr.status >= 500) {
    // Log the cause for operators; the response carries only the safe message. A suspended
    // organization's held deliveries are the platform's decision, not a failure.
    console.error(
      JSON.stringify({
        level: appErr.code === "organization_suspended" ? "warn" : "error",
        code: appErr.code,
        path: new URL(c.req.url).pathname,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      }),
    );
  }
  const body: ErrorBody = { error: { code: appErr.code, message: appErr.message } };
  if (appErr.details) body.error.details = appErr.details;
  return c.json(body, appErr.status, appErr.headers);
}
