// The dispatcher's two calls into the state machine (supabase/migrations/*_outbound_webhook_dispatch.sql):
// claiming due deliveries, leased, with everything one attempt needs (private.webhook_claim: the caps,
// the byte budget and the pacing are the database's), and recording outcomes with a claim along in the
// same round trip (private.webhook_record_and_claim).
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
}

/** An outcome, with the lease it ends. */
export type ResultRow = AttemptResult & Pick<Claimed, "delivery_id" | "endpoint_id" | "lease_token">;

export interface ClaimLimits {
  /** Most rows to claim; 0 claims nothing. */
  limit: number;
  /** Most bytes of bodies to claim. */
  maxBytes: number;
  perEndpoint: number;
  perOrganization: number;
  leaseSeconds: number;
}

export async function claimDue(sql: Sql, c: ClaimLimits): Promise<Claimed[]> {
  return await sql<Claimed[]>`
    select * from private.webhook_claim(${c.limit}, ${c.maxBytes}, ${c.perEndpoint}, ${c.perOrganization},
      ${c.leaseSeconds})`;
}

/** Records `results`, then claims (as claimDue) in the same transaction. */
export async function recordAndClaim(sql: Sql, results: ResultRow[], c: ClaimLimits): Promise<Claimed[]> {
  return await sql<Claimed[]>`
    select * from private.webhook_record_and_claim(${sql.json(results as never)}, ${c.limit}, ${c.maxBytes},
      ${c.perEndpoint}, ${c.perOrganization}, ${c.leaseSeconds})`;
}
