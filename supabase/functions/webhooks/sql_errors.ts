// Errors raised by the webhook operation functions in SQL, as API errors.
import { AppError, badRequest, forbidden, notFound } from "../_shared/errors.ts";

export function fromSqlError(err: unknown): unknown {
  const e = err as { code?: string; message?: string } | null;
  switch (e?.code) {
    case "P0002":
      return notFound("not_found", e.message ?? "Not found");
    case "42501":
      return forbidden("admin_required", "Only administrators of the organization can do this");
    case "55000":
      return new AppError(409, "endpoint_disabled", e.message ?? "The endpoint is disabled; enable it first");
    case "22023":
    case "23514":
      return badRequest("invalid_request", e.message ?? "Invalid value");
    default:
      return err;
  }
}

export async function mapSqlErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fromSqlError(err);
  }
}
