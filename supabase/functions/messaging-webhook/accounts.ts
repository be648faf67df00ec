// The gateway accounts a webhook routes to (with the app secrets that sign it) and the subscription
// handshake. @see docs/inbound-webhooks.md#point-the-gateway-at-the-endpoint
// These reads run as the server: the secrets table has no policy for any user role.
import type { Sql } from "../_shared/db.ts";
import { bytesEqual, sha256 } from "../_shared/hmac.ts";

export interface Account {
  id: string;
  organizationId: string;
  phoneNumberId: string;
  appSecret: string;
}

export async function loadAccounts(sql: Sql, phoneNumberIds: string[]): Promise<Map<string, Account>> {
  const accounts = new Map<string, Account>();
  if (phoneNumberIds.length === 0) return accounts;
  const rows = await sql<
    { id: string; organization_id: string; phone_number_id: string; app_secret: string }[]
  >`
    select a.id, a.organization_id, a.phone_number_id, s.app_secret
    from public.messaging_accounts a
    join public.messaging_account_secrets s on s.account_id = a.id
    where a.phone_number_id = any(${phoneNumberIds}::text[])`;
  for (const r of rows) {
    accounts.set(r.phone_number_id, {
      id: r.id,
      organizationId: r.organization_id,
      phoneNumberId: r.phone_number_id,
      appSecret: r.app_secret,
    });
  }
  return accounts;
}

/**
 * True when some account's verify token equals `token`. The lookup goes by SHA-256 digest (timing of an
 * index search over digests says nothing about the token) and the token itself is compared in constant
 * time.
 */
export async function verifyTokenMatches(sql: Sql, token: string): Promise<boolean> {
  const given = new TextEncoder().encode(token);
  const digest = sha256(given);
  const rows = await sql<{ verify_token: string }[]>`
    select verify_token from public.messaging_account_secrets
    where verify_token_sha256 = ${digest}
    limit 5`;
  let match = false;
  for (const r of rows) {
    if (bytesEqual(new TextEncoder().encode(r.verify_token), given)) match = true;
  }
  return match;
}
