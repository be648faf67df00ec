// Input validation at the edge. Hono's validators (declared per route in route.ts) parse with zod and
// hand every result to `validationHook`, which decides the error: a 400 naming every bad field, or a
// 404 for a malformed path id. `jsonBody` reads the body first, within its limit.
import type { Hook } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import { AppError, badRequest, notFound } from "../_shared/errors.ts";
import { parseJson, readRawBody } from "../_shared/body.ts";

const BODY_LIMIT = 64 * 1024;
// The media types Hono's JSON validator reads (@hono/zod-openapi refuses a body of any other type).
const JSON_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

type Field = { field: string; message: string };

function invalid(where: string, fields: Field[]): never {
  throw badRequest("invalid_request", `Invalid ${where}: ${fields.map((f) => f.field).join(", ")}`, {
    fields,
  });
}

/**
 * Text PostgreSQL cannot hold is refused here, by field: a NUL character is an encoding error in the
 * database (a 500 after the fact), and an unpaired surrogate would be stored silently altered (U+FFFD).
 */
function refuseUnstorable(where: string, value: unknown): void {
  const fields: Field[] = [];
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
  if (fields.length) invalid(where, fields);
}

// deno-lint-ignore no-explicit-any
export const validationHook: Hook<any, any, any, void> = (result) => {
  if (result.target === "param") {
    // A malformed id names nothing that exists: not found, exactly like an id of another organization.
    if (!result.success) {
      const name = String((result.error as z.ZodError).issues[0]?.path[0] ?? "id");
      throw notFound("not_found", `No such ${name.replace(/_id$|Id$/, "")}`);
    }
    return;
  }
  const where = result.target === "json" ? "body" : result.target;
  if (!result.success) {
    invalid(
      where,
      (result.error as z.ZodError).issues.flatMap((i) =>
        // An unknown key is named as the field it is, not as the object that holds it.
        i.code === "unrecognized_keys"
          ? i.keys.map((k) => ({
            field: [...i.path, k].join("."),
            message: "is not a field of this request",
          }))
          : [{ field: i.path.join(".") || where, message: i.message }]
      ),
    );
  }
  refuseUnstorable(where, result.data);
};

/**
 * Reads the body once, refusing it past 64 KiB before it is buffered whole, and checks that it is JSON
 * (an empty body is `{}`); Hono's JSON validator then reads it from the request's body cache.
 */
export const jsonBody: MiddlewareHandler = async (c, next) => {
  const raw = await readRawBody(c.req.raw, BODY_LIMIT);
  if (raw.byteLength > 0 && !JSON_TYPE.test(c.req.header("content-type") ?? "")) {
    throw new AppError(415, "unsupported_media_type", "Send the body as application/json");
  }
  if (raw.byteLength > 0) parseJson(raw); // our 400 invalid_json; Hono's validator then parses the text
  const cache = c.req.bodyCache as Record<string, Promise<unknown>>; // Hono caches promises there
  cache.arrayBuffer = Promise.resolve(raw.buffer);
  cache.text = Promise.resolve(raw.byteLength === 0 ? "{}" : new TextDecoder().decode(raw));
  await next();
};
