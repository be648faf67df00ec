// Replay: re-runs logged payloads through the same normalize -> apply path a live delivery takes, in
// the receiver that owns them (each function replays only its own provider's rows). A processed row is
// left alone, so replaying an applied payload changes nothing; unverified and rejected rows are never
// applied. @see docs/inbound-webhooks.md#replay
import type { Sql } from "../db.ts";
import { AppError } from "../errors.ts";
import { applyAndRecord, statusOf } from "./pipeline.ts";
import { type LogRow, logRow, replayableRows } from "./store.ts";
import type { Receiver } from "./types.ts";

export interface ReplayOutcome {
  log_id: string;
  status: "processed" | "duplicate" | "unmatched" | "failed" | "skipped";
  outcome?: string;
  reason?: string;
}

/** Replays one log row of this receiver; with organizationId, only if the row belongs to it. */
export async function replayLogged<C>(
  sql: Sql,
  receiver: Receiver<C>,
  logId: string,
  organizationId?: string,
): Promise<ReplayOutcome | null> {
  const row = await logRow(sql, receiver.provider, logId, organizationId);
  return row ? await replayRow(sql, receiver, row) : null;
}

export interface ReplayFailedOptions {
  limit?: number;
  /** Rows still 'received' count as interrupted after this long (default five minutes). */
  staleAfterSeconds?: number;
}

/** Replays every failed, unmatched or interrupted row of an organization for this receiver, oldest first. */
export async function replayFailed<C>(
  sql: Sql,
  receiver: Receiver<C>,
  organizationId: string,
  options: ReplayFailedOptions = {},
): Promise<ReplayOutcome[]> {
  const rows = await replayableRows(
    sql,
    receiver.provider,
    organizationId,
    options.limit ?? 1000,
    options.staleAfterSeconds ?? 300,
  );
  const out: ReplayOutcome[] = [];
  // One at a time and in arrival order: the order events were received is the best order we know.
  for (const row of rows) out.push(await replayRow(sql, receiver, row));
  return out;
}

async function replayRow<C>(sql: Sql, receiver: Receiver<C>, row: LogRow): Promise<ReplayOutcome> {
  if (row.status === "processed") return { log_id: row.id, status: "duplicate" };
  if (
    row.signature_valid !== true || row.status === "rejected" || row.payload === null ||
    row.organization_id === null
  ) {
    return { log_id: row.id, status: "skipped", reason: `not replayable (${row.status})` };
  }
  let change: C;
  try {
    change = receiver.normalize(row.payload, {
      organizationId: row.organization_id,
      accountId: row.account_id,
      receivedAt: row.received_at,
    });
  } catch (err) {
    return { log_id: row.id, status: "skipped", reason: err instanceof AppError ? err.message : String(err) };
  }
  try {
    const result = await applyAndRecord(sql, receiver, row.id, change);
    return { log_id: row.id, status: statusOf(result), outcome: result.outcome };
  } catch (err) {
    const e = err as { message?: string };
    return { log_id: row.id, status: "failed", reason: e?.message ?? String(err) };
  }
}
