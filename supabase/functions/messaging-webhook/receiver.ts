// The WhatsApp Cloud API receiver as the inbound pipeline sees it: a body routes, for each phone-number
// id it names, to the registration of that id whose app secret signed it; it is logged as one part per
// account (only that account's changes), and applied through private.process_whatsapp_webhook.
// @see docs/whatsapp.md#messages-and-receipts-post
import type { ApplyResult, Part, Receiver, Target } from "../_shared/inbound/types.ts";
import { CONNECTION_TEST_EVENT } from "../_shared/inbound/shapes.ts";
import { loadCandidates } from "./accounts.ts";
import { warnUnknownIds } from "./unknown_ids.ts";
import { type InboundMessage, parseWebhook, type Receipt, storableStrings } from "./payload.ts";

export const SIGNATURE_HEADER = "x-hub-signature-256";

type AccountTarget = Target & { accountId: string; phoneNumberId: string };

/** The rows private.whatsapp_apply_webhook takes, for one account of one organization. */
export interface WhatsAppChange {
  messages: Record<string, unknown>[];
  receipts: Record<string, unknown>[];
  /** Only the settings page's signed test: nothing to apply, and no sign that Meta reaches us. */
  test?: boolean;
}

type Json = Record<string, unknown>;

export const whatsappReceiver: Receiver<WhatsAppChange> = {
  provider: "whatsapp",
  signatureHeaders: [SIGNATURE_HEADER],
  // The gateway sends no delivery id: a part's bytes are its key.
  keyFromHeaders: false,
  // Each id named goes to the first of its registrations whose app secret signed the body (see
  // loadCandidates for the order; only the organization's own at its callback URL); ids none verifies
  // for are skipped like ids nobody registered.
  async route(sql, body, organizationSegment) {
    if (body === undefined) return { targets: [], mode: "each" };
    const webhook = parseWebhook(body);
    const candidates = await loadCandidates(sql, webhook.phoneNumberIds, organizationSegment);
    const targets: AccountTarget[] = candidates.map((a) => ({
      organizationId: a.organizationId,
      accountId: a.id,
      phoneNumberId: a.phoneNumberId,
      key: a.phoneNumberId,
      secret: a.appSecret,
    }));
    const held = new Set(candidates.map((a) => a.phoneNumberId));
    const unknown = webhook.phoneNumberIds.filter((id) => !held.has(id));
    // Not an error of ours and nothing the gateway can fix by retrying: tell the operator, boundedly.
    // (At an organization's own URL an id may be another organization's: nothing to tell.)
    if (unknown.length > 0 && organizationSegment === undefined) warnUnknownIds(unknown);
    return { targets, mode: "each", unknown };
  },
  split(body, verified): Part[] {
    const clean = storableStrings(body) as { object: string; entry: { id?: string; changes: Json[] }[] };
    return (verified as AccountTarget[]).map((target) => ({
      target,
      body: {
        object: clean.object,
        entry: clean.entry
          .map((e) => ({
            ...e,
            changes: e.changes.filter((c) => phoneNumberIdOf(c) === target.phoneNumberId),
          }))
          .filter((e) => e.changes.length > 0),
      },
    }));
  },
  eventName(body) {
    const webhook = parseWebhook(body);
    const kinds = [webhook.messages.length ? "messages" : "", webhook.receipts.length ? "statuses" : ""];
    return kinds.filter(Boolean).join("+") || (webhook.tests > 0 ? CONNECTION_TEST_EVENT : null);
  },
  normalize(body, owner) {
    const webhook = parseWebhook(body);
    return {
      messages: webhook.messages.map((m) => messageRow(m, owner.organizationId, owner.accountId)),
      receipts: webhook.receipts.map((r) => receiptRow(r, owner.organizationId)),
      ...(webhook.tests > 0 && webhook.messages.length === 0 && webhook.receipts.length === 0
        ? { test: true }
        : {}),
    };
  },
  async apply(sql, logId, change) {
    const [row] = await sql<{ result: ApplyResult }[]>`
      select private.process_whatsapp_webhook(${logId}::uuid, ${sql.json(change.messages as never)},
                                              ${sql.json(change.receipts as never)}) as result`;
    return row!.result;
  },
};

function phoneNumberIdOf(change: Json): string | undefined {
  if (change.field !== undefined && change.field !== "messages") return undefined;
  const id = ((change.value as Json | undefined)?.metadata as Json | undefined)?.phone_number_id;
  return typeof id === "string" ? id : undefined;
}

function messageRow(m: InboundMessage, organizationId: string, accountId: string | null) {
  return {
    organization_id: organizationId,
    account_id: accountId,
    provider_message_id: m.providerMessageId,
    phone: m.contact.phone,
    moved_from: m.movedFrom,
    phone_countries: m.national.countries,
    phone_national: m.national.national,
    user_id: m.contact.userId,
    name: m.profileName,
    sent_at: m.sentAt.toISOString(),
    type: m.type,
    text: m.text,
    content: m.content,
    raw: m.raw,
  };
}

function receiptRow(r: Receipt, organizationId: string) {
  return {
    organization_id: organizationId,
    provider_message_id: r.providerMessageId,
    status: r.status,
    occurred_at: r.occurredAt.toISOString(),
    recipient_phone: r.recipient.phone,
    recipient_user_id: r.recipient.userId,
    errors: r.errors,
    raw: r.raw,
  };
}
