// The gateway accounts (registrations of a phone-number id) a webhook may belong to, with the app
// secrets that sign it, and the subscription handshake. These reads and marks run as the server: the
// secrets table has no policy for any user role.
// @see docs/whatsapp.md#who-a-number-belongs-to
import type { Sql } from "../_shared/db.ts";
import { bytesEqual, sha256 } from "../_shared/hmac.ts";

export interface Account {
  id: string;
  organizationId: string;
  phoneNumberId: string;
  appSecret: string;
}

/**
 * Registrations of one id loaded per body. Several organizations may register the same id (anyone can
 * type one); this bounds what a crowd of them adds to a body's routing. A crowd larger than this, each
 * registration in an organization of its own and each verified by a body it signed itself, could keep
 * an owner who has not received a body yet from being tried: 256 organizations for one number.
 */
export const CANDIDATES_PER_ID = 256;

/**
 * Every registration of the ids a body names (of one organization when the body came to its own
 * callback URL), in order of preference per id: verified ones first, the
 * earliest verified leading (of organizations holding the same app secret, it receives the body), then
 * the newest unverified ones, so a crowd registered before the owner cannot keep the owner's
 * registration from being tried (and verified) by the first body Meta sends after it.
 */
export async function loadCandidates(
  sql: Sql,
  phoneNumberIds: string[],
  organizationId?: string,
): Promise<Account[]> {
  if (phoneNumberIds.length === 0) return [];
  const rows = await sql<
    { id: string; organization_id: string; phone_number_id: string; app_secret: string }[]
  >`
    select id, organization_id, phone_number_id, app_secret
    from (
      select a.id, a.organization_id, a.phone_number_id, s.app_secret,
             row_number() over (partition by a.phone_number_id
                                order by a.verified_at asc nulls last, a.created_at desc, a.id) as rank
      from public.messaging_accounts a
      join public.messaging_account_secrets s on s.account_id = a.id
      where a.phone_number_id = any(${phoneNumberIds}::text[])
        and (${organizationId ?? null}::uuid is null or a.organization_id = ${organizationId ?? null}::uuid)
    ) c
    where rank <= ${CANDIDATES_PER_ID}
    order by phone_number_id, rank`;
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    phoneNumberId: r.phone_number_id,
    appSecret: r.app_secret,
  }));
}

const MARK_EVERY_MS = 60_000;
/** When this process last marked each registration: a busy number costs no write per body. */
const marked = new Map<string, number>();

/**
 * Marks the registrations a verified body was applied for: verified from the first one on, and when
 * the last body arrived (written at most once a minute per registration).
 */
export async function markReceived(sql: Sql, accountIds: string[]): Promise<void> {
  const now = performance.now();
  const due = [...new Set(accountIds)].filter((id) => !(now - (marked.get(id) ?? -Infinity) < MARK_EVERY_MS));
  if (due.length === 0) return;
  if (marked.size > 10_000) marked.clear();
  for (const id of due) marked.set(id, now);
  accountIds = due;
  await sql`
    update public.messaging_accounts
    set verified_at = coalesce(verified_at, now()), last_received_at = now()
    where id = any(${accountIds}::uuid[])
      and (verified_at is null or last_received_at is null or last_received_at < now() - interval '1 minute')`;
}

/** At most this many registrations share one verify token (one Meta app's numbers). */
const TOKEN_MATCHES = 64;

/**
 * The registrations whose verify token equals `token` (of one organization when `organizationId` is
 * given: its own callback URL), marked as having passed the handshake now. The lookup goes by SHA-256
 * digest (timing of an index search over digests says nothing about the token) and the token itself
 * is compared in constant time. `record: false` (the settings page's own check) marks nothing: the page
 * says when Meta last did it.
 */
export async function passHandshake(
  sql: Sql,
  token: string,
  organizationId?: string,
  { record = true }: { record?: boolean } = {},
): Promise<string[]> {
  const given = new TextEncoder().encode(token);
  const digest = sha256(given);
  const rows = await sql<{ account_id: string; verify_token: string }[]>`
    select account_id, verify_token from public.messaging_account_secrets
    where verify_token_sha256 = ${digest}
      and (${organizationId ?? null}::uuid is null or organization_id = ${organizationId ?? null}::uuid)
    limit ${TOKEN_MATCHES}`;
  const matched: string[] = [];
  for (const r of rows) {
    if (bytesEqual(new TextEncoder().encode(r.verify_token), given)) matched.push(r.account_id);
  }
  if (matched.length > 0 && record) {
    await sql`
      update public.messaging_accounts set handshake_at = now()
      where id = any(${matched}::uuid[]) and (handshake_at is null or handshake_at < now() - interval '1 minute')`;
  }
  return matched;
}
