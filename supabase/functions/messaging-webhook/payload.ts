// The WhatsApp Cloud API webhook body, validated at the edge and flattened into the facts the store
// applies: inbound messages and delivery receipts, each tagged with the gateway phone-number id that
// routes it to an organization. Fields we do not use are kept (passthrough) so the raw part of every
// message can be stored as received.
import { z } from "zod";
import { badRequest } from "../_shared/errors.ts";
import { CONNECTION_TEST_MARK } from "../_shared/inbound/shapes.ts";
import { normalizePhone } from "../_shared/phone.ts";
import { type NationalForms, nationalForms } from "./phone_match.ts";
import { MAX_JSON_DEPTH, valueDepth } from "../_shared/storable.ts";

/** Unix seconds as the gateway sends them (a string of digits, sometimes a number). */
const UnixSeconds = z.union([z.string().regex(/^\d{1,12}$/), z.number().int().nonnegative()])
  .transform((v) => new Date(Number(v) * 1000));

const Contact = z.looseObject({
  profile: z.looseObject({ name: z.string().optional() }).optional(),
  wa_id: z.string().optional(),
  user_id: z.string().optional(),
});

const Message = z.looseObject({
  id: z.string().min(1).max(512),
  from: z.string().max(200).optional(),
  from_user_id: z.string().max(200).optional(),
  timestamp: UnixSeconds,
  type: z.string().min(1).max(64),
});

const StatusError = z.looseObject({
  code: z.number().optional(),
  title: z.string().optional(),
  message: z.string().optional(),
});

const Status = z.looseObject({
  id: z.string().min(1).max(512),
  status: z.string().min(1).max(40),
  timestamp: UnixSeconds,
  recipient_id: z.string().max(200).optional(),
  recipient_user_id: z.string().max(200).optional(),
  errors: z.array(StatusError).optional(),
});

const Value = z.looseObject({
  messaging_product: z.string().optional(),
  metadata: z.looseObject({
    display_phone_number: z.string().optional(),
    phone_number_id: z.string().min(1).max(64),
  }).optional(),
  contacts: z.array(Contact).optional(),
  messages: z.array(Message).optional(),
  statuses: z.array(Status).optional(),
});

// Only `messages` changes are validated in depth: other fields the app may be subscribed to (account,
// template or quality updates) have shapes of their own and are acknowledged without being stored.
const Change = z.looseObject({ field: z.string().optional(), value: z.looseObject({}) });

export const WebhookBody = z.looseObject({
  object: z.literal("whatsapp_business_account"),
  entry: z.array(z.looseObject({ id: z.string().optional(), changes: z.array(Change) })),
});

export type Json = Record<string, unknown>;

/** Who a message is from or a receipt is for: a normalized phone, a business-scoped user id, or both. */
export interface ContactRef {
  phone: string | null;
  userId: string | null;
}

export interface InboundMessage {
  phoneNumberId: string;
  providerMessageId: string;
  /** The thread's contact: for a "number changed" system message, the NEW number (see movedFrom). */
  contact: ContactRef;
  /** A "number changed" system message: the number the contact had, whose thread moves to the new one. */
  movedFrom: string | null;
  /** How the contact's number may be written nationally in a member record (phone_match.ts). */
  national: NationalForms;
  profileName: string | null;
  sentAt: Date;
  type: string;
  text: string | null;
  content: unknown;
  /** This message's part of the body only: the message, its contact and the metadata. */
  raw: Json;
}

export interface Receipt {
  phoneNumberId: string;
  providerMessageId: string;
  status: string;
  occurredAt: Date;
  recipient: ContactRef;
  errors: unknown[] | null;
  raw: Json;
}

export interface ParsedWebhook {
  messages: InboundMessage[];
  receipts: Receipt[];
  /** Every phone-number id the body routes to: each one's account must have signed it. */
  phoneNumberIds: string[];
  /** Changes that are not `messages` or carry no phone-number id: nothing to store. */
  otherChanges: number;
  /** Changes marked as the settings page's signed test: verified and logged, nothing stored. */
  tests: number;
}

/** Validates the body's shape (400 with the offending paths otherwise) and flattens it. */
export function parseWebhook(body: unknown): ParsedWebhook {
  // storableStrings walks the body recursively: a body nested deeper than any webhook is refused first.
  if (valueDepth(body) > MAX_JSON_DEPTH) {
    throw badRequest("invalid_payload", `Body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const parsed = WebhookBody.safeParse(storableStrings(body));
  if (!parsed.success) {
    const paths = [...new Set(parsed.error.issues.map((i) => i.path.join(".") || "(body)"))].slice(0, 10);
    throw badRequest("invalid_payload", "Body is not a WhatsApp Cloud API webhook", { paths });
  }
  const out: ParsedWebhook = { messages: [], receipts: [], phoneNumberIds: [], otherChanges: 0, tests: 0 };
  const ids = new Set<string>();
  for (const [i, entry] of parsed.data.entry.entries()) {
    for (const [j, change] of entry.changes.entries()) {
      if (change.field !== undefined && change.field !== "messages") {
        out.otherChanges++;
        continue;
      }
      const checked = Value.safeParse(change.value);
      if (!checked.success) {
        const paths = [...new Set(checked.error.issues.map((x) => x.path.join(".")))].slice(0, 10)
          .map((p) => `entry.${i}.changes.${j}.value${p ? `.${p}` : ""}`);
        throw badRequest("invalid_payload", "Body is not a WhatsApp Cloud API webhook", { paths });
      }
      const value = checked.data;
      const phoneNumberId = value.metadata?.phone_number_id;
      if (!phoneNumberId) {
        out.otherChanges++;
        continue;
      }
      if (!value.messages?.length && !value.statuses?.length) continue;
      ids.add(phoneNumberId);
      // The settings page's signed test (CONNECTION_TEST_MARK): routed and verified like any change,
      // its message stored nowhere.
      if ((change.value as Json)[CONNECTION_TEST_MARK] === true) {
        out.tests++;
        continue;
      }
      const contacts = value.contacts ?? [];
      for (const message of value.messages ?? []) {
        out.messages.push(toInboundMessage(phoneNumberId, value.metadata, message, contacts));
      }
      for (const status of value.statuses ?? []) {
        out.receipts.push({
          phoneNumberId,
          providerMessageId: status.id,
          status: status.status,
          occurredAt: status.timestamp,
          recipient: contactRef(status.recipient_id, status.recipient_user_id),
          errors: status.errors?.length ? status.errors : null,
          raw: { status: status as Json, metadata: value.metadata as Json },
        });
      }
    }
  }
  out.phoneNumberIds = [...ids];
  return out;
}

/**
 * A sender id that is a phone number becomes `phone`; anything else (a business-scoped user id, which
 * newer payloads send as `from_user_id` / `user_id`, or put in `from` when the phone is withheld)
 * becomes `userId`.
 */
function contactRef(id: string | undefined, userId: string | undefined): ContactRef {
  const phone = normalizePhone(id);
  const otherId = id && !phone ? id.trim() : undefined;
  return { phone, userId: (userId?.trim() || otherId) ?? null };
}

type ContactT = z.infer<typeof Contact>;
type MessageT = z.infer<typeof Message>;

function toInboundMessage(
  phoneNumberId: string,
  metadata: unknown,
  message: MessageT,
  contacts: ContactT[],
): InboundMessage {
  // The contact entry of this sender: by phone or user id, else the only one there is.
  const contact = contacts.find((c) =>
    (message.from !== undefined && c.wa_id === message.from) ||
    (message.from_user_id !== undefined && c.user_id === message.from_user_id)
  ) ?? (contacts.length === 1 ? contacts[0] : undefined);
  let ref = contactRef(message.from, message.from_user_id);
  if (!ref.phone && !ref.userId && contact) ref = contactRef(contact.wa_id, contact.user_id);
  if (!ref.userId && contact?.user_id) ref = { ...ref, userId: contact.user_id };
  if (!ref.phone && !ref.userId) {
    throw badRequest("invalid_payload", "A message has no sender", { message_id: message.id });
  }
  const typed = (message as Json)[message.type];
  // WhatsApp tells a contact's number change with a system message from the old number naming the new
  // one (system.wa_id): the conversation moves to the new number.
  let movedFrom: string | null = null;
  const system = message.type === "system" ? typed as Json | undefined : undefined;
  const changedTo = ["user_changed_number", "customer_changed_number"].includes(String(system?.type))
    ? normalizePhone(typeof system?.wa_id === "string" ? system.wa_id : undefined)
    : null;
  if (changedTo && ref.phone && changedTo !== ref.phone) {
    movedFrom = ref.phone;
    ref = { ...ref, phone: changedTo };
  }
  return {
    phoneNumberId,
    providerMessageId: message.id,
    contact: ref,
    movedFrom,
    national: nationalForms(ref.phone),
    profileName: contact?.profile?.name?.trim() || null,
    sentAt: message.timestamp,
    type: message.type,
    text: textOf(message.type, typed),
    content: typed ?? null,
    raw: { message: message as Json, contact: (contact ?? null) as Json | null, metadata: metadata as Json },
  };
}

/** The human-readable text of a message, whatever its type carries it in. */
function textOf(type: string, typed: unknown): string | null {
  if (!typed || typeof typed !== "object") return null;
  const t = typed as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);
  switch (type) {
    case "text":
    case "system":
      return str(t.body);
    case "image":
    case "video":
    case "document":
      return str(t.caption) ?? str(t.filename);
    case "reaction":
      return str(t.emoji);
    case "button":
      return str(t.text);
    case "location":
      return str(t.name) ?? str(t.address);
    case "interactive": {
      const reply = (t.button_reply ?? t.list_reply) as Record<string, unknown> | undefined;
      return str(reply?.title);
    }
    default:
      return null;
  }
}

/**
 * PostgreSQL text and jsonb cannot hold NUL characters or unpaired UTF-16 surrogates, which JSON can
 * carry. A user's message containing one must still be stored (refusing it would make the gateway
 * retry it forever), so such characters become U+FFFD in keys and values alike. The signature is
 * checked over the untouched raw bytes.
 */
export function storableStrings(value: unknown): unknown {
  if (typeof value === "string") return value.toWellFormed().replaceAll("\u0000", "\uFFFD");
  if (Array.isArray(value)) return value.map(storableStrings);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [storableStrings(k) as string, storableStrings(v)]),
    );
  }
  return value;
}
