// Validation pieces both payment receivers use: Razorpay's event envelope and entities, the neutral
// payment shape, and the one way a schema failure becomes a 400.
import { z } from "zod";
import { badRequest } from "../errors.ts";
import type { NormalizedEvent } from "./types.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Parses with a zod schema; a mismatch is the sender's error (400) naming the offending fields. */
export function parseOr400<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const fields = parsed.error.issues.slice(0, 5).map((i) => i.path.join(".") || "(body)").join(", ");
    throw badRequest("invalid_payload", `Payload does not match the expected shape: ${fields}`);
  }
  return parsed.data;
}

export function unknownEvent(event: unknown): never {
  throw badRequest("unknown_event", `Unknown event: ${String(event).slice(0, 60)}`);
}

export const providerId = z.string().min(1).max(100);
export const amountMinor = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const currency = z.string().regex(/^[A-Za-z]{3}$/).transform((c) => c.toUpperCase());
export const isoTime = z.iso.datetime({ offset: true });
export const unixSeconds = z.number().int().positive();
export const organizationId = z.string().regex(UUID).optional();

export const toIso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The neutral payment object: `{id, amount_minor, currency, paid_at?}`. */
export const NeutralPayment = z.object({
  id: providerId,
  amount_minor: amountMinor,
  currency,
  paid_at: isoTime.optional(),
});

// Razorpay --------------------------------------------------------------------------------------------
// Every Razorpay webhook is `{entity: "event", event, contains, payload: {<name>: {entity}}, created_at}`.
// `notes` is an object, or an empty array when there are none.
const Notes = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish();

/**
 * A Razorpay event envelope: `<entity>.<action>` named, and marked as an envelope by `entity: "event"`,
 * `payload`, `contains` or `account_id` (neutral events carry their objects at the top instead), so an
 * envelope that lost its payload is still recognised as one.
 */
export function isRazorpayEnvelope(body: unknown): boolean {
  const b = body as Record<string, unknown> | null;
  return typeof b === "object" && b !== null && !Array.isArray(b) && typeof b.event === "string" &&
    b.event.includes(".") &&
    (b.entity === "event" || "payload" in b || "contains" in b || "account_id" in b);
}

/** Every Razorpay event carries its entities in `payload`: without one there is nothing to apply. */
export function requirePayload(body: unknown): void {
  const payload = (body as { payload?: unknown }).payload;
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw badRequest(
      "missing_payload",
      "missing payload: a Razorpay event carries its entities in `payload`",
    );
  }
}

/**
 * When a Razorpay event happened: the envelope's created_at; some documented samples (the
 * subscription.activated one with an immediate start and an upfront amount) carry it inside `payload`
 * instead; failing both, the entity's own time where that is the event's (a refund's), else the time we
 * received it. A verified event is never refused for lacking it.
 */
export function razorpayEventTime(body: unknown, receivedAt: Date, entityCreatedAt?: number): string {
  const b = body as { created_at?: unknown; payload?: { created_at?: unknown } };
  for (const t of [b.created_at, b.payload?.created_at, entityCreatedAt]) {
    if (typeof t === "number" && Number.isInteger(t) && t > 0) return toIso(t);
  }
  return receivedAt.toISOString();
}

export function note(notes: unknown, key: string): string | undefined {
  if (typeof notes !== "object" || notes === null || Array.isArray(notes)) return undefined;
  const value = (notes as Record<string, unknown>)[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

export const RazorpayPayment = z.object({
  id: providerId,
  amount: amountMinor,
  currency,
  created_at: unixSeconds.optional(),
  notes: Notes,
});

export const RazorpaySubscription = z.object({
  id: providerId,
  notes: Notes,
});

export const RazorpayRefund = z.object({
  id: providerId,
  payment_id: providerId,
  amount: amountMinor,
  currency,
  created_at: unixSeconds.optional(),
  notes: Notes,
});

export const envelope = <S extends z.ZodRawShape>(payload: S) =>
  z.object({ event: z.string(), payload: z.object(payload) });

export const entityOf = <T extends z.ZodType>(entity: T) => z.object({ entity });

/** Reads `payload.<name>.entity` of a Razorpay envelope without validating anything else. */
export function razorpayEntity(body: unknown, name: string): Record<string, unknown> | undefined {
  const e = (body as { payload?: Record<string, { entity?: unknown }> } | null)?.payload?.[name]?.entity;
  return typeof e === "object" && e !== null ? e as Record<string, unknown> : undefined;
}

export function stringField(obj: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = obj?.[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

// The settings page's signed test ------------------------------------------------------------------------
/**
 * "Send a signed test" on the Connections page posts this through the real receiver, signed with the
 * organization's secret: verified, logged and answered like any event, and it changes nothing.
 */
export const CONNECTION_TEST_EVENT = "connection.test";

const ConnectionTest = z.object({
  event: z.literal(CONNECTION_TEST_EVENT),
  id: providerId,
  occurred_at: isoTime,
  organization_id: organizationId,
  test: z.literal(true),
});

/**
 * The WhatsApp number's signed test (POST /connections/whatsapp/numbers/{id}/test) is a body in Meta's
 * shape, signed as Meta signs, whose change's value carries this field set to true: its message is
 * verified and logged (event connection.test) and applied to nothing (no conversation, no contact). A
 * sender holding the app secret could mark a real body so; all it would do is keep it out of the inbox.
 */
export const CONNECTION_TEST_MARK = "connection_test";

/** The test event as a change of nothing; undefined for any other body. */
export function connectionTest(body: unknown): NormalizedEvent | undefined {
  if ((body as { event?: unknown } | null)?.event !== CONNECTION_TEST_EVENT) return undefined;
  parseOr400(ConnectionTest, body);
  return { event: CONNECTION_TEST_EVENT, change: { kind: "none" } };
}
