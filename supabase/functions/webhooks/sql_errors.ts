// Errors raised by the webhook operation functions in SQL, as API errors
// (@see docs/configuration-api.md#errors-limits-and-pagination).
//
// Messages of our own `raise` statements (P0002, 55000, 22023) are written for callers. PostgreSQL's
// integrity errors are not: they name relations and constraints ("violates check constraint
// webhook_endpoints_url_check"), which is schema detail an API caller has no use for. Those become a
// field-level 400 built from the constraint's column, in the same shape as a zod failure.
import { AppError, badRequest, forbidden, notFound } from "../_shared/errors.ts";

interface PgError {
  code?: string;
  message?: string;
  hint?: string;
  table_name?: string;
  column_name?: string;
  constraint_name?: string;
}

// What a caller is told about a column the tables check; anything else gets the generic message.
const FIELD_MESSAGES: Record<string, string> = {
  url: "must be an http(s) URL with a host, no credentials and no spaces, at most 2048 characters",
  events: "must be one or more of the event types listed at /event-types",
  description: "must be at most 500 characters",
  secret: "is not an acceptable signing secret",
  name: "must be 1 to 100 characters",
};

/** The API field a constraint guards: its column, or the `<table>_<column>_check` naming convention. */
function constraintField(e: PgError): string | undefined {
  if (e.column_name) return e.column_name;
  const name = e.constraint_name ?? "";
  const table = e.table_name ?? "";
  if (table && name.startsWith(`${table}_`) && name.endsWith("_check")) {
    return name.slice(table.length + 1, -"_check".length) || undefined;
  }
  return undefined;
}

function integrityError(e: PgError): AppError {
  const field = constraintField(e) ?? "body";
  const message = FIELD_MESSAGES[field] ?? "is not an allowed value";
  return badRequest("invalid_request", `Invalid body: ${field}`, { fields: [{ field, message }] });
}

export function fromSqlError(err: unknown): unknown {
  const e = err as PgError | null;
  switch (e?.code) {
    case "P0002":
      return notFound("not_found", e.message ?? "Not found");
    case "42501":
      return forbidden("admin_required", "Only administrators of the organization can do this");
    case "55000":
      if (e.hint === "event_redacted") {
        return new AppError(409, "event_redacted", e.message ?? "Event redacted");
      }
      return new AppError(409, "endpoint_disabled", e.message ?? "The endpoint is disabled; enable it first");
    case "22023":
      return badRequest("invalid_request", e.message ?? "Invalid value");
    case "54000":
      if (e.hint === "too_many_endpoints") {
        return new AppError(409, "too_many_endpoints", e.message ?? "Too many endpoints");
      }
      return err;
    case "40P01": // deadlock_detected: two admins changing each other at once (each holds their own authority)
      return new AppError(
        409,
        "conflict",
        "Another change to the organization ran at the same moment; look again and retry",
      );
    case "23514": // check_violation
    case "23502": // not_null_violation
    case "22001": // string_data_right_truncation
      return integrityError(e);
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
