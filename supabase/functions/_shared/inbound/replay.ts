// Replay: re-runs logged payloads through the same normalize -> process_payment_webhook path a live
// delivery takes. A processed row is left alone, so replaying an applied payload changes nothing;
// unverified and rejected rows are never applied.
import type { Sql } from "../db.ts";
import { AppError } from "../errors.ts";
import { applyAndRecord } from "./pipeline.ts";
import type { Provider, ProviderSpec } from "./types.ts";

export type SpecRegistry = Record<Provider, ProviderSpec>;

export interface ReplayOutcome {
  log_id: string;
  status: "processed" | "duplicate" | "unmatched" | "failed" | "skipped";
  outcome?: string;
  reason?: string;
}

interface LogRow {
  id: string;
  organization_id: string | null;
  provider: Provider;
  payload: unknown;
  signature_valid: boolean | null;
  status: string;
}

/** Replays one log row; with organizationId, only if the row belongs to that organization. */
export async function replayLogged(
  sql: Sql,
  specs: SpecRegistry,
  logId: string,
  organizationId?: string,
): Promise<ReplayOutcome | null> {
  const [row] = await sql<LogRow[]>`
    select id, organization_id, provider, payload, signature_valid, status
    from public.donation_payment_webhook_log
    where id = ${logId}::uuid and (${organizationId ?? null}::uuid is null or organization_id = ${
    organizationId ?? null
  }::uuid)`;
  return row ? await replayRow(sql, specs, row) : null;
}

/**
 * Replays every failed or unmatched row of an organization, oldest first, plus rows left 'received'
 * for over five minutes (an apply interrupted by a lost connection).
 */
export async function replayFailed(
  sql: Sql,
  specs: SpecRegistry,
  organizationId: string,
  limit = 1000,
): Promise<ReplayOutcome[]> {
  const rows = await sql<LogRow[]>`
    select id, organization_id, provider, payload, signature_valid, status
    from public.donation_payment_webhook_log
    where organization_id = ${organizationId}::uuid
      and (status in ('failed', 'unmatched')
           or (status = 'received' and last_received_at < now() - interval '5 minutes'))
    order by received_at
    limit ${limit}`;
  const out: ReplayOutcome[] = [];
  // One at a time and in arrival order: the order events were received is the best order we know.
  for (const row of rows) out.push(await replayRow(sql, specs, row));
  return out;
}

async function replayRow(sql: Sql, specs: SpecRegistry, row: LogRow): Promise<ReplayOutcome> {
  if (row.status === "processed") return { log_id: row.id, status: "duplicate" };
  if (row.signature_valid !== true || row.status === "rejected" || row.payload === null) {
    return { log_id: row.id, status: "skipped", reason: `not replayable (${row.status})` };
  }
  let change;
  try {
    ({ change } = specs[row.provider].normalize(row.payload));
  } catch (err) {
    return { log_id: row.id, status: "skipped", reason: err instanceof AppError ? err.message : String(err) };
  }
  try {
    const result = await applyAndRecord(sql, row.id, change);
    const status = result.outcome === "duplicate"
      ? "duplicate"
      : result.outcome === "unmatched"
      ? "unmatched"
      : "processed";
    return { log_id: row.id, status, outcome: result.outcome };
  } catch (err) {
    const e = err as { message?: string };
    return { log_id: row.id, status: "failed", reason: e?.message ?? String(err) };
  }
}
