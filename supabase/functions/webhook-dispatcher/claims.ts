// The dispatcher's two calls into the state machine: claiming due deliveries for this dispatcher,
// leased (private.webhook_claim), with everything one attempt needs: the target, the secrets, the exact
// body; and recording outcomes, with a claim along in the same round trip
// (private.webhook_record_and_claim). The database keeps every endpoint within `perEndpoint` deliveries
// in flight across all dispatchers; `endpoint_full` marks the endpoints a claim filled.
import type { Sql } from "../_shared/db.ts";
import type { DeliveryId, EndpointId, EventId, LeaseToken } from "./ids.ts";
import type { AttemptResult } from "./send.ts";

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
  endpoint_full: boolean;
}

/** Which lease an outcome ends. */
export type LeaseRef = Pick<Claimed, "delivery_id" | "endpoint_id" | "lease_token">;
export type ResultRow = AttemptResult & LeaseRef;

export interface ClaimLimits {
  /** Most rows to claim; 0 claims nothing. */
  limit: number;
  perEndpoint: number;
  leaseSeconds: number;
}

export async function claimDue(sql: Sql, c: ClaimLimits): Promise<Claimed[]> {
  return await sql<Claimed[]>`
    select * from private.webhook_claim(${c.limit}, ${c.perEndpoint}, ${c.leaseSeconds})`;
}

/** Records `results`, then claims (as claimDue) in the same transaction. */
export async function recordAndClaim(sql: Sql, results: ResultRow[], c: ClaimLimits): Promise<Claimed[]> {
  return await sql<Claimed[]>`
    select * from private.webhook_record_and_claim(${sql.json(results as never)}, ${c.limit},
      ${c.perEndpoint}, ${c.leaseSeconds})`;
}
