// The SQL of the inbound log (migration 20261122105000_inbound_webhook_log.sql). Each call is one
// statement in its own transaction: the log row is committed before anything is applied, and applying
// is a single call to the receiver's process function, so a payload is applied completely or not at all.
// @see docs/inbound-webhooks.md#the-log-inbound_webhook_log
import type { Sql } from "../db.ts";
import { storableString } from "../storable.ts";
import type { Provider } from "./types.ts";

export interface LogEntry {
  organizationId: string;
  accountId: string | null;
  provider: Provider;
  event: string | null;
  idempotencyKey: string;
  /** SHA-256 of the logged bytes: the same signed bytes are the same delivery whatever key they carry. */
  bodySha256: Uint8Array;
  bodyBytes: number;
  /** The body text when it is JSON jsonb can hold; otherwise rawBody carries it. */
  payloadText: string | null;
  rawBody: string | null;
  headers: Record<string, string>;
}

/** Writes a verified delivery that is answered 400 without being applied (malformed, unknown event). */
export async function logRejected(sql: Sql, entry: LogEntry, error: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into public.inbound_webhook_log
      (organization_id, provider, account_id, event, idempotency_key, payload, raw_body, body_sha256,
       body_bytes, headers, signature_valid, status, error)
    values (${entry.organizationId}, ${entry.provider}, ${entry.accountId}, ${entry.event},
            ${entry.idempotencyKey}, ${entry.payloadText}::text::jsonb, ${entry.rawBody}, ${entry.bodySha256},
            ${entry.bodyBytes}, ${sql.json(entry.headers)}, true, 'rejected', ${storableString(error)})
    returning id`;
  return row!.id;
}

/**
 * Counts a delivery nobody vouched for (wrong or missing signature, or no way to tell whose it is):
 * our reason and its size only, folded into one row per organization, provider, reason and hour.
 */
export async function logRefused(
  sql: Sql,
  organizationId: string | null,
  provider: Provider,
  status: "unverified" | "rejected",
  reason: string,
  bytes: number,
): Promise<void> {
  await sql`select private.log_refused_webhook(${organizationId}::uuid, ${provider}, ${status}, ${reason}, ${bytes})`;
}

/** logRefused for several organizations at once, in one statement (at most 64 of them are counted). */
export async function logRefusedFor(
  sql: Sql,
  organizationIds: string[],
  provider: Provider,
  reason: string,
  bytes: number,
): Promise<void> {
  await sql`select private.log_refused_webhooks(${organizationIds}::uuid[], ${provider}, 'unverified', ${reason},
                                                ${bytes})`;
}

/**
 * Records a verified delivery, or finds the row an earlier delivery with the same key or the same
 * bytes left, counting the delivery (private.log_verified_webhook).
 */
export async function logVerified(sql: Sql, entry: LogEntry): Promise<{ id: string; status: string }> {
  const [row] = await sql<{ id: string; status: string }[]>`
    select id, status from private.log_verified_webhook(
      ${entry.organizationId}::uuid, ${entry.provider}, ${entry.accountId}::uuid, ${entry.event},
      ${entry.idempotencyKey}, ${entry.bodySha256}, ${entry.payloadText}::text::jsonb, ${entry.rawBody},
      ${sql.json(entry.headers)}, ${entry.bodyBytes})`;
  return row!;
}

/** Which of these organizations are suspended (private.organization_suspensions). */
export async function suspendedOrganizations(sql: Sql, organizationIds: string[]): Promise<Set<string>> {
  const rows = await sql<{ organization_id: string }[]>`
    select organization_id from private.organization_suspensions
    where organization_id = any(${organizationIds}::uuid[])`;
  return new Set(rows.map((r) => r.organization_id));
}

export async function markFailed(sql: Sql, logId: string, error: string): Promise<void> {
  await sql`select private.mark_inbound_webhook_failed(${logId}::uuid, ${storableString(error)})`;
}

export interface LogRow {
  id: string;
  organization_id: string | null;
  account_id: string | null;
  provider: Provider;
  payload: unknown;
  signature_valid: boolean | null;
  status: string;
  received_at: Date;
}

/** One row of a provider, optionally only if it belongs to an organization. */
export async function logRow(
  sql: Sql,
  provider: Provider,
  logId: string,
  organizationId?: string,
): Promise<LogRow | undefined> {
  const [row] = await sql<LogRow[]>`
    select id, organization_id, account_id, provider, payload, signature_valid, status, received_at
    from public.inbound_webhook_log
    where id = ${logId}::uuid and provider = ${provider}
      and (${organizationId ?? null}::uuid is null or organization_id = ${organizationId ?? null}::uuid)`;
  return row;
}

/**
 * An organization's rows of a provider worth replaying, oldest first: failed and unmatched ones, and
 * ones left 'received' longer than `staleAfterSeconds` (an apply interrupted by a lost connection).
 */
export function replayableRows(
  sql: Sql,
  provider: Provider,
  organizationId: string,
  limit: number,
  staleAfterSeconds: number,
): Promise<LogRow[]> {
  return sql<LogRow[]>`
    select id, organization_id, account_id, provider, payload, signature_valid, status, received_at
    from public.inbound_webhook_log
    where organization_id = ${organizationId}::uuid and provider = ${provider}
      and (status in ('failed', 'unmatched')
           or (status = 'received' and last_received_at <= now() - make_interval(secs => ${staleAfterSeconds})))
    order by received_at, id
    limit ${limit}`;
}
