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
  organizationId: string | null;
  provider: Provider;
  event: string | null;
  idempotencyKey: string;
  /** The body text when it is JSON jsonb can hold; otherwise rawBody carries it. */
  payloadText: string | null;
  rawBody: string | null;
  headers: Record<string, string>;
  signatureValid: boolean | null;
}

/** Writes a delivery that is answered without being applied (unverified or rejected). */
export async function logUnapplied(
  sql: Sql,
  entry: LogEntry,
  status: "unverified" | "rejected",
  error: string,
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into public.donation_payment_webhook_log
      (organization_id, provider, event, idempotency_key, payload, raw_body, headers, signature_valid,
       status, error)
    values (${entry.organizationId}, ${entry.provider}, ${entry.event}, ${entry.idempotencyKey},
            ${entry.payloadText}::text::jsonb, ${entry.rawBody}, ${
    sql.json(entry.headers)
  }, ${entry.signatureValid},
            ${status}, ${storableString(error)})
    returning id`;
  return row!.id;
}

/**
 * Records a verified delivery, or finds the row an earlier delivery with the same key left, counting
 * the delivery. A row that was not processed yet takes the newest payload (a provider retry is the same
 * event); a processed row is never touched beyond its counters.
 */
export async function logVerified(
  sql: Sql,
  entry: LogEntry & { organizationId: string },
): Promise<{ id: string; status: string }> {
  const [row] = await sql<{ id: string; status: string }[]>`
    insert into public.donation_payment_webhook_log as l
      (organization_id, provider, event, idempotency_key, payload, raw_body, headers, signature_valid, status)
    values (${entry.organizationId}, ${entry.provider}, ${entry.event}, ${entry.idempotencyKey},
            ${entry.payloadText}::text::jsonb, ${entry.rawBody}, ${sql.json(entry.headers)}, true, 'received')
    on conflict (organization_id, provider, idempotency_key) where signature_valid and status <> 'rejected'
    do update
    set deliveries = l.deliveries + 1,
        last_received_at = now(),
        updated_at = now(),
        payload = case when l.status = 'processed' then l.payload else excluded.payload end,
        headers = case when l.status = 'processed' then l.headers else excluded.headers end,
        event = case when l.status = 'processed' then l.event else excluded.event end
    returning id, status`;
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
