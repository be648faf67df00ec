// Input validation at the edge: zod parses, and a failure becomes a 400 that names every bad field.
import type { Context } from "hono";
import type { z } from "zod";
import { badRequest, notFound } from "../_shared/errors.ts";
import { parseJson, readRawBody } from "../_shared/body.ts";

const BODY_LIMIT = 64 * 1024;

function fail(where: string, error: z.ZodError): never {
  const fields = error.issues.map((i) => ({ field: i.path.join(".") || where, message: i.message }));
  throw badRequest(
    "invalid_request",
    `Invalid ${where}: ${fields.map((f) => f.field).join(", ")}`,
    { fields },
  );
}

/**
 * Text PostgreSQL cannot hold is refused here, by field: a NUL character is an encoding error in the
 * database (a 500 after the fact), and an unpaired surrogate would be stored silently altered (U+FFFD).
 */
function refuseUnstorable(where: string, value: unknown): void {
  const fields: { field: string; message: string }[] = [];
  const stack: [unknown, string[]][] = [[value, []]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (v.includes("\u0000") || !v.isWellFormed()) {
        fields.push({
          field: path.join(".") || where,
          message: "must not contain NUL characters or unpaired surrogates",
        });
      }
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) stack.push([x, [...path, k]]);
    }
  }
  if (fields.length) {
    throw badRequest("invalid_request", `Invalid ${where}: ${fields.map((f) => f.field).join(", ")}`, {
      fields,
    });
  }
}

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const raw = await readRawBody(c.req.raw, BODY_LIMIT);
  const value = raw.byteLength === 0 ? {} : parseJson(raw);
  const parsed = schema.safeParse(value);
  if (!parsed.success) fail("body", parsed.error);
  refuseUnstorable("body", parsed.data);
  return parsed.data;
}

export function query<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) fail("query", parsed.error);
  refuseUnstorable("query", parsed.data);
  return parsed.data;
}

export function param<S extends z.ZodType>(c: Context, name: string, schema: S): z.infer<S> {
  const parsed = schema.safeParse(c.req.param(name));
  // A malformed id names nothing that exists: not found, exactly like an id of another organization.
  if (!parsed.success) throw notFound("not_found", `No such ${name.replace(/_id$|Id$/, "")}`);
  return parsed.data;
}
