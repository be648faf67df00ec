// Applies one verified webhook with ONE statement, private.whatsapp_apply_webhook (see its migration):
// every thread, message and receipt of the request is written, or none is. A single statement needs
// no client-side transaction, so a connection dropped mid-request leaves nothing half-written and
// nothing for the driver to roll back on a dead socket.
import type { Sql } from "../_shared/db.ts";
import type { Account } from "./accounts.ts";
import type { InboundMessage, Receipt } from "./payload.ts";

export interface ApplyResult {
  messages: { stored: number; duplicates: number };
  receipts: { applied: number; waiting: number; duplicates: number };
}

/**
 * Deadlocks and unique-key races between concurrent requests (e.g. two adopting the same phone-less
 * thread) abort the statement as a whole; running it again is safe because every write is idempotent.
 */
const RETRYABLE = new Set(["40P01", "40001", "23505"]);
const ATTEMPTS = 4;

export async function applyWebhook(
  sql: Sql,
  accounts: Map<string, Account>,
  messages: InboundMessage[],
  receipts: Receipt[],
): Promise<ApplyResult> {
  const messageRows = messages.map((m) => {
    const account = accounts.get(m.phoneNumberId)!;
    return {
      organization_id: account.organizationId,
      account_id: account.id,
      provider_message_id: m.providerMessageId,
      phone: m.contact.phone,
      user_id: m.contact.userId,
      name: m.profileName,
      sent_at: m.sentAt.toISOString(),
      type: m.type,
      text: m.text,
      content: m.content,
      raw: m.raw,
    };
  });
  const receiptRows = receipts.map((r) => ({
    organization_id: accounts.get(r.phoneNumberId)!.organizationId,
    provider_message_id: r.providerMessageId,
    status: r.status,
    occurred_at: r.occurredAt.toISOString(),
    recipient_phone: r.recipient.phone,
    recipient_user_id: r.recipient.userId,
    errors: r.errors,
    raw: r.raw,
  }));
  for (let attempt = 1;; attempt++) {
    try {
      const [row] = await sql<{ result: ApplyResult }[]>`
        select private.whatsapp_apply_webhook(${sql.json(messageRows as never)}, ${
        sql.json(receiptRows as never)
      }) as result`;
      return row!.result;
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (attempt >= ATTEMPTS || !RETRYABLE.has(code)) throw err;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
    }
  }
}
