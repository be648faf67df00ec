// Keyset pagination cursors: (timestamp, id) of the last row of a page, newest first
// (@see docs/configuration-api.md#errors-limits-and-pagination). The timestamp is kept as Postgres' own
// text so no precision is lost in the round trip.
//
// A cursor comes back from the client, so it is input like any other: the decoder accepts only
// timestamps PostgreSQL will accept too (real calendar dates, times within the day, UTC offsets within
// Postgres' ±15:59), so a tampered cursor is a 400 here rather than a cast error in the query.
import { z } from "zod";
import { badRequest } from "../_shared/errors.ts";

// timestamptz as Postgres prints it, e.g. 2026-11-22 10:15:30.123456+00
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(?:([+-])(\d{2})(?::?(\d{2}))?|Z)?$/;

export function encodeCursor(row: { cursor_at?: string; id: string }): string {
  return new TextEncoder().encode(JSON.stringify([row.cursor_at, row.id]))
    .toBase64({ alphabet: "base64url", omitPadding: true });
}

function isValidTimestamp(text: string): boolean {
  const m = TIMESTAMP.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as number[];
  const offsetHours = m[9] === undefined ? 0 : Number(m[9]);
  const offsetMinutes = m[10] === undefined ? 0 : Number(m[10]);
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1) return false;
  const leap = year! % 4 === 0 && (year! % 100 !== 0 || year! % 400 === 0);
  const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month! - 1]!;
  return day! <= monthDays && hour! <= 23 && minute! <= 59 && second! <= 59 && offsetHours <= 15 &&
    offsetMinutes <= 59;
}

export function decodeCursor(cursor: string): [string, string] {
  try {
    const [at, id] = JSON.parse(
      new TextDecoder().decode(Uint8Array.fromBase64(cursor, { alphabet: "base64url" })),
    ) as unknown[];
    if (
      typeof at === "string" && isValidTimestamp(at) && typeof id === "string" &&
      z.uuid().safeParse(id).success
    ) {
      return [at, id];
    }
  } catch { /* fall through */ }
  throw badRequest("invalid_cursor", "cursor is not one this API returned", {
    fields: [{ field: "cursor", message: "invalid cursor" }],
  });
}

/** Strips the cursor column from a row. */
export const withoutCursor = <T extends { cursor_at?: string }>({ cursor_at: _, ...row }: T) => row;

/** A page of a query that read `limit + 1` rows: `limit` of them, and the next page's cursor (null: none). */
export function pageOf<T extends { cursor_at?: string; id: string }>(rows: T[], limit: number) {
  const page = rows.slice(0, limit);
  return {
    data: page.map(withoutCursor),
    next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!) : null,
  };
}
