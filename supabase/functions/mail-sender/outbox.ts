// The sender's loop over the outbox (private.mail_outbox, 20261125100000_mail_outbox.sql): claim due
// mails (leased, so two senders never send the same one), render and send a few at once, record every
// outcome. The database decides retries, give-up and what a mail may still carry.
// @see docs/operations.md#e-mail
import type { Sql } from "../_shared/db.ts";
import { type OutboxMail, render } from "./templates.ts";
import { MailError, type MailTransport } from "./transport.ts";

const LEASE_SECONDS = 120;
const BATCH = 20;
const AT_ONCE = 4;

export interface SendOptions {
  siteUrl: string;
  /** Where an invitee reports an unwanted invitation (MAIL_ABUSE_ADDRESS). */
  abuseAddress?: string;
  /** Stop after this many mails (hosted: a request has 2 s of CPU). */
  maxMails?: number;
  /** Claim nothing after this time (ms since the epoch). */
  deadline?: number;
  signal?: AbortSignal;
}

export interface SendStats {
  claimed: number;
  sent: number;
  failed: number;
}

interface Result {
  id: string;
  lease_token: string;
  ok: boolean;
  message_id: string | null;
  error: string | null;
  permanent: boolean;
}

/** Sends what is due until nothing is, or the cap, the deadline or the signal says stop. */
export async function sendDue(sql: Sql, transport: MailTransport, options: SendOptions): Promise<SendStats> {
  const stats: SendStats = { claimed: 0, sent: 0, failed: 0 };
  const max = options.maxMails ?? 100;
  while (stats.claimed < max && !options.signal?.aborted && Date.now() < (options.deadline ?? Infinity)) {
    const claimed = await sql<(OutboxMail & { lease_token: string })[]>`
      select id, lease_token, kind, recipient, data
      from private.mail_claim(${Math.min(BATCH, max - stats.claimed)}, ${LEASE_SECONDS})`;
    if (claimed.length === 0) break;
    stats.claimed += claimed.length;
    const results: Result[] = [];
    for (let i = 0; i < claimed.length; i += AT_ONCE) {
      results.push(
        ...await Promise.all(claimed.slice(i, i + AT_ONCE).map((m) => sendOne(transport, m, options))),
      );
    }
    stats.sent += results.filter((r) => r.ok).length;
    stats.failed += results.filter((r) => !r.ok).length;
    await sql`select private.mail_record(${sql.json(results as never)})`;
    // Every mail of the batch failed and could succeed later: the server is down or refusing us. The
    // rest waits for the next run rather than spending this one's time on timeouts.
    if (results.every((r) => !r.ok && !r.permanent)) break;
  }
  return stats;
}

async function sendOne(
  transport: MailTransport,
  m: OutboxMail & { lease_token: string },
  options: SendOptions,
): Promise<Result> {
  const base = { id: m.id, lease_token: m.lease_token };
  try {
    const { messageId } = await transport.send({
      id: m.id,
      to: m.recipient,
      ...render(m, options.siteUrl, options.abuseAddress),
    });
    return { ...base, ok: true, message_id: messageId, error: null, permanent: false };
  } catch (err) {
    const e = err instanceof MailError ? err : new MailError(String(err), false);
    return { ...base, ok: false, message_id: null, error: e.message, permanent: e.permanent };
  }
}
