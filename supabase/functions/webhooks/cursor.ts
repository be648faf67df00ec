// Keyset pagination cursors: (timestamp, id) of the last row of a page, newest first. Rows written while
// a client pages through are newer than its cursor and never shift later pages. The timestamp is kept
// as Postgres' own text so no precision is lost in the round trip.
import { z } from "zod";
import { badRequest } from "../_shared/errors.ts";

// timestamptz as Postgres prints it, e.g. 2026-11-22 10:15:30.123456+00
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;

export function encodeCursor(row: { cursor_at?: string; id: string }): string {
  return btoa(JSON.stringify([row.cursor_at, row.id])).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

export function decodeCursor(cursor: string): [string, string] {
  try {
    const [at, id] = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/"))) as unknown[];
    if (
      typeof at === "string" && TIMESTAMP.test(at) && typeof id === "string" && z.uuid().safeParse(id).success
    ) {
      return [at, id];
    }
  } catch { /* fall through */ }
  throw badRequest("invalid_cursor", "cursor is not one this API returned", {
    fields: [{ field: "cursor", message: "invalid cursor" }],
  });
}
