// The SQL of the inbound pipeline. Each call is one statement (one round trip) in its own transaction:
// the log row is committed before anything is applied, and applying is a single call to
// private.process_payment_webhook, so a payload is applied completely or not at all.
import type { Sql } from "../db.ts";
import { storableString } from "../storable.ts";
import type { Change, Provider } from "./types.ts";

export interface Target {
  organization_id: string;
  secret: string;
}

export function findTargets(
  sql: Sql,
  provider: Provider,
  organizationId: string | undefined,
  subscriptionId: string | undefined,
  paymentId: string | undefined,
): Promise<Target[]> {
  return sql<Target[]>`
    select organization_id, secret
    from private.inbound_webhook_targets(${provider}, ${organizationId ?? null}::uuid,
                                         ${subscriptionId ?? null}, ${paymentId ?? null})`;
}

export interface LogEntry {
  organizationId: string;
  provider: Provider;
  event: string | null;
  idempotencyKey: string;
  /** SHA-256 of the raw body: the same signed bytes are the same delivery whatever key they carry. */
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
    insert into public.donation_payment_webhook_log
      (organization_id, provider, event, idempotency_key, payload, raw_body, body_sha256, body_bytes, headers,
       signature_valid, status, error)
    values (${entry.organizationId}, ${entry.provider}, ${entry.event}, ${entry.idempotencyKey},
            ${entry.payloadText}::text::jsonb, ${entry.rawBody}, ${entry.bodySha256}, ${entry.bodyBytes},
            ${sql.json(entry.headers)}, true, 'rejected', ${storableString(error)})
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

/**
 * Records a verified delivery, or finds the row an earlier delivery with the same key or the same
 * bytes left, counting the delivery (private.log_verified_webhook).
 */
export async function logVerified(sql: Sql, entry: LogEntry): Promise<{ id: string; status: string }> {
  const [row] = await sql<{ id: string; status: string }[]>`
    select id, status from private.log_verified_webhook(
      ${entry.organizationId}::uuid, ${entry.provider}, ${entry.event}, ${entry.idempotencyKey},
      ${entry.bodySha256}, ${entry.payloadText}::text::jsonb, ${entry.rawBody}, ${sql.json(entry.headers)},
      ${entry.bodyBytes})`;
  return row!;
}

export interface ApplyResult {
  outcome: "applied" | "stale" | "unmatched" | "duplicate";
  [k: string]: unknown;
}

export async function applyLogged(sql: Sql, logId: string, change: Change): Promise<ApplyResult> {
  const [row] = await sql<{ result: ApplyResult }[]>`
    select private.process_payment_webhook(${logId}::uuid, ${sql.json(change as never)}) as result`;
  return row!.result;
}

export async function markFailed(sql: Sql, logId: string, error: string): Promise<void> {
  await sql`select private.mark_payment_webhook_failed(${logId}::uuid, ${storableString(error)})`;
}
