// The dispatcher's one call into the state machine (supabase/migrations/*_outbound_webhook_dispatch.sql):
// record outcomes, if any, and claim due deliveries, leased, with everything an attempt needs, in one
// round trip. The caps, the byte budget and the pacing are the database's.
import type { Sql } from "../_shared/db.ts";
import type { DeliveryId, EndpointId, EventId, LeaseToken } from "./ids.ts";
import type { AttemptResult } from "./send.ts";

/** The largest body an event carries (private.webhook_max_body_bytes(), 256 KiB). */
export const MAX_BODY_BYTES = 256 * 1024;

export interface Claimed {
  delivery_id: DeliveryId;
  lease_token: LeaseToken;
  endpoint_id: EndpointId;
  event_id: EventId;
  event_type: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  attempt_number: number;
  body: string;
  /** This claim filled the endpoint (to its cap, its organization's or its pace). */
  endpoint_full: boolean;
  /** Bytes of `body` (UTF-8), as the database counted them when the event was written. */
  body_bytes: number;
  /** Not before then (the database's clock): the endpoint's rate limit paces its sends, across dispatchers. */
  send_at: Date | null;
  /** The endpoint's custom headers, [{name, value}] as JSON text; null: none (custom_headers.ts). */
  headers: string | null;
}

/** An outcome, with the lease it ends. */
export type ResultRow = AttemptResult & Pick<Claimed, "delivery_id" | "endpoint_id" | "lease_token">;

/** What every claim keeps to, across all dispatchers. */
export interface ClaimCaps {
  /** Deliveries in flight at once to one endpoint. */
  perEndpoint: number;
  /** Deliveries in flight at once for one organization. */
  perOrganization: number;
  /** How long a claim holds; must exceed the timeout with room to record the result. */
  leaseSeconds: number;
}

/** Records `results`, then claims at most `rows` rows and `bytes` bytes of bodies (0 rows: none). */
export async function recordAndClaim(
  sql: Sql,
  results: ResultRow[],
  rows: number,
  bytes: number,
  c: ClaimCaps,
): Promise<Claimed[]> {
  const { perEndpoint: e, perOrganization: o, leaseSeconds: s } = c;
  return results.length === 0
    ? await sql<Claimed[]>`select * from private.webhook_claim(${rows}, ${bytes}, ${e}, ${o}, ${s})`
    : await sql<Claimed[]>`select * from private.webhook_record_and_claim(${sql.json(results as never)},
        ${rows}, ${bytes}, ${e}, ${o}, ${s})`;
}

/** A lease given back unsent: the delivery is due again at once, with no attempt counted. */
export type ReleasedLease = Pick<Claimed, "delivery_id" | "lease_token">;

/** Gives back leases claimed and never sent (a stopping run); resolves how many were still held. */
export async function releaseLeases(sql: Sql, leases: ReleasedLease[]): Promise<number> {
  const [row] = await sql<{ released: number }[]>`
    select private.webhook_release_leases(${sql.json(leases as never)}) as released`;
  return row?.released ?? 0;
}
