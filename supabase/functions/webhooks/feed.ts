// The events feed's cursors and its one query. A position is (xid, id): the transaction that wrote the
// event and the event's id; only events below the commit horizon are listed, so a walk forward from any
// position sees every event exactly once (why: supabase/migrations/20261207160000_webhook_events_feed.sql).
// A cursor also carries when it was issued: once that is older than the organization's retention, the
// events after it may have been removed, and the feed says so (410) rather than skip them silently.
// @see docs/configuration-api.md#the-events-feed
import { z } from "zod";
import type { Tx } from "../_shared/db.ts";
import { AppError, badRequest } from "../_shared/errors.ts";

/** The nil UUID: (horizon, NIL) lies before every event of the horizon's transaction and after all below. */
const NIL = "00000000-0000-0000-0000-000000000000";
/** A page's bodies add up to at most this (the first event always comes, up to 256 KiB). */
export const FEED_MAX_BYTES = 1024 * 1024;

export interface Position {
  xid: string;
  id: string;
  /** Unix seconds the cursor was issued. */
  at: number;
}

export function encodeFeedCursor(p: Position): string {
  return new TextEncoder().encode(JSON.stringify(["f1", p.xid, p.id, p.at]))
    .toBase64({ alphabet: "base64url", omitPadding: true });
}

export function decodeFeedCursor(cursor: string, field: string): Position {
  try {
    const [v, xid, id, at] = JSON.parse(
      new TextDecoder().decode(Uint8Array.fromBase64(cursor, { alphabet: "base64url" })),
    ) as unknown[];
    if (
      v === "f1" && typeof xid === "string" && /^\d{1,19}$/.test(xid) && typeof id === "string" &&
      z.uuid().safeParse(id).success && Number.isSafeInteger(at) && (at as number) >= 0
    ) {
      return { xid, id, at: at as number };
    }
  } catch { /* fall through */ }
  throw badRequest("invalid_cursor", `${field} is not a cursor this API returned`, {
    fields: [{ field, message: "invalid cursor" }],
  });
}

export interface FeedQuery {
  after?: Position;
  before?: Position;
  types?: string[];
  since?: string;
  until?: string;
  limit: number;
}

export interface FeedRow {
  id: string;
  type: string;
  created_at: string;
  xid: string;
  payload: Record<string, unknown>;
  /** How many events the walk found (at most limit + 1), before the page was trimmed to its bytes. */
  found: number;
}

/** What the caller's transaction sees: the commit horizon, the time, and the retention in days. */
export async function feedHorizon(tx: Tx): Promise<{ horizon: string; now: number; days: number }> {
  const [h] = await tx<{ horizon: string; now: number; days: number }[]>`
    select pg_snapshot_xmin(pg_current_snapshot())::text as horizon,
           extract(epoch from now())::bigint::int8 as now, private.webhook_feed_retention_days() as days`;
  return { horizon: h!.horizon, now: Number(h!.now), days: h!.days };
}

/** A cursor issued before the retention began: events after it may be gone. */
export function expired(p: Position, now: number, days: number): AppError {
  return new AppError(
    410,
    "cursor_expired",
    `This cursor was issued more than ${days} days ago (the organization's retention), so events after ` +
      "it may have been removed; list the newest events again and follow from there",
    {
      issued_at: new Date(p.at * 1000).toISOString(),
      retention_days: days,
      now: new Date(now * 1000).toISOString(),
    },
  );
}

/**
 * One page: forward from `after` (oldest first), else newest first (before `before`), below the
 * horizon, without test events or redacted ones; `limit + 1` rows so the caller knows whether more
 * follow, trimmed to FEED_MAX_BYTES of bodies. With event types, one index walk per type, merged.
 */
export async function feedPage(tx: Tx, org: string, horizon: string, q: FeedQuery): Promise<FeedRow[]> {
  const { text, args } = feedPageQuery(org, horizon, q);
  return await tx.unsafe<FeedRow[]>(text, args as never[]);
}

/** feedPage's statement (exported for the benchmark, which times and explains exactly this text). */
export function feedPageQuery(org: string, horizon: string, q: FeedQuery): { text: string; args: unknown[] } {
  const args: unknown[] = [];
  const arg = (v: unknown) => `$${args.push(v)}`;
  const forward = q.after !== undefined;
  const dir = forward ? "asc" : "desc";
  const where = [
    `e.organization_id = ${arg(org)}::uuid`,
    `e.xid < ${arg(horizon)}::text::xid8`,
    `not e.payload ? 'test'`,
    `e.redacted_at is null`,
  ];
  const from = q.after ?? q.before;
  if (from) {
    where.push(`(e.xid, e.id) ${forward ? ">" : "<"} (${arg(from.xid)}::text::xid8, ${arg(from.id)}::uuid)`);
  }
  if (q.since) where.push(`e.created_at >= ${arg(q.since)}::timestamptz`);
  if (q.until) where.push(`e.created_at < ${arg(q.until)}::timestamptz`);
  // The limit as a literal (a validated integer): a generic plan that cannot see it may sort every event
  // of the organization instead of walking the index.
  const n = String(Math.trunc(q.limit) + 1);
  const cols = "e.id, e.type, e.created_at, e.xid, e.payload, e.body_bytes";
  const walk = q.types?.length
    ? `select x.* from unnest(${arg(q.types)}::text[]) t(type) cross join lateral (
         select ${cols} from public.webhook_events e where ${where.join(" and ")} and e.type = t.type
         order by e.xid ${dir}, e.id ${dir} limit ${n}) x
       order by x.xid ${dir}, x.id ${dir} limit ${n}`
    : `select ${cols} from public.webhook_events e where ${where.join(" and ")}
       order by e.xid ${dir}, e.id ${dir} limit ${n}`;
  const text = `select p.id, p.type, p.created_at, p.xid::text as xid, p.payload, p.found::int as found from (
       select w.*, count(*) over () as found, sum(w.body_bytes) over (order by w.xid ${dir}, w.id ${dir}) as bytes,
              row_number() over (order by w.xid ${dir}, w.id ${dir}) as n
       from (${walk}) w
     ) p where p.n = 1 or p.bytes <= ${FEED_MAX_BYTES}
     order by p.xid ${dir}, p.id ${dir}`;
  return { text, args };
}

/** Where a walk forward stands once it has read everything below the horizon. */
export const headPosition = (horizon: string, now: number, from?: Position): Position =>
  from && BigInt(from.xid) > BigInt(horizon) ? { ...from, at: now } : { xid: horizon, id: NIL, at: now };
