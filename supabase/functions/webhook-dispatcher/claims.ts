// Claiming: due deliveries for this dispatcher, leased (private.webhook_claim), with everything one
// attempt needs: the target, the secrets, the exact body. The database keeps every endpoint within
// `perEndpoint` deliveries in flight across all dispatchers; `endpoint_full` marks the endpoints this
// claim filled.
import type { Sql } from "../_shared/db.ts";

export interface Claimed {
  delivery_id: string;
  lease_token: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  attempt_number: number;
  body: string;
  endpoint_full: boolean;
}

export async function claimDue(
  sql: Sql,
  limit: number,
  perEndpoint: number,
  leaseSeconds: number,
): Promise<Claimed[]> {
  return await sql<Claimed[]>`
    select * from private.webhook_claim(${limit}, ${perEndpoint}, ${leaseSeconds})`;
}
