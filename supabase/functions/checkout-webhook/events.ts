// Checkout (subscription) provider events, in the neutral shape and in Razorpay's subscription webhook
// shape, mapped onto the stored states of recurring_donations.
// @see docs/inbound-webhooks.md#subscription-states-recurring_donationsstatus
import { z } from "zod";
import { badRequest } from "../_shared/errors.ts";
import type {
  NormalizedEvent,
  ProviderSpec,
  RoutingHints,
  SubscriptionStatus,
} from "../_shared/inbound/types.ts";
import {
  connectionTest,
  entityOf,
  envelope,
  isoTime,
  isRazorpayEnvelope,
  NeutralPayment,
  note,
  organizationId,
  parseOr400,
  providerId,
  razorpayEntity,
  razorpayEventTime,
  RazorpayPayment,
  RazorpaySubscription,
  requirePayload,
  stringField,
  toIso,
  unknownEvent,
} from "../_shared/inbound/shapes.ts";

interface Mapping {
  /** Absent: the event changes no state we keep (accepted, logged, "ignored"). */
  status?: SubscriptionStatus;
  charge?: true;
  failed?: true;
}

/** The neutral events of the specification. */
export const NEUTRAL_EVENTS: Record<string, Mapping> = {
  created: { status: "pending" },
  charged: { status: "active", charge: true },
  paused: { status: "paused" },
  cancelled: { status: "cancelled" },
  payment_failed: { status: "past_due", failed: true },
};

/** Razorpay's subscription events. */
export const RAZORPAY_EVENTS: Record<string, Mapping> = {
  "subscription.authenticated": { status: "authenticated" },
  "subscription.activated": { status: "active" },
  "subscription.charged": { status: "active", charge: true },
  "subscription.paused": { status: "paused" },
  "subscription.resumed": { status: "active" },
  "subscription.pending": { status: "past_due", failed: true },
  "subscription.halted": { status: "halted" },
  "subscription.cancelled": { status: "cancelled" },
  "subscription.completed": { status: "completed" },
  // Plan, quantity or schedule changed; Razorpay says there is no state change.
  "subscription.updated": {},
};

const Neutral = z.object({
  event: z.string(),
  subscription_id: providerId,
  occurred_at: isoTime,
  organization_id: organizationId,
  payment: NeutralPayment.optional(),
});

const RazorpaySubscriptionEvent = envelope({
  subscription: entityOf(RazorpaySubscription),
  payment: entityOf(RazorpayPayment).optional(),
});

const chargeWithoutPayment = () =>
  badRequest(
    "invalid_payload",
    "Payload does not match the expected shape: payment (a charge carries its payment)",
  );

function normalize(body: unknown, receivedAt: Date): NormalizedEvent {
  if (isRazorpayEnvelope(body)) {
    requirePayload(body);
    const event = (body as { event: string }).event;
    // Verified, and an event we do not act on (invoice.paid, order.paid, one added later): acknowledged
    // and logged as ignored; a 4xx would only make Razorpay retry it for a day, then disable the webhook.
    if (!Object.hasOwn(RAZORPAY_EVENTS, event)) return { event, change: { kind: "none" } };
    const mapping = RAZORPAY_EVENTS[event]!;
    const e = parseOr400(RazorpaySubscriptionEvent, body);
    if (!mapping.status) return { event, change: { kind: "none" } };
    const p = e.payload.payment?.entity;
    if (mapping.charge && !p) throw chargeWithoutPayment();
    const occurredAt = razorpayEventTime(body, receivedAt);
    return {
      event,
      change: {
        kind: "subscription",
        subscription_id: e.payload.subscription.entity.id,
        status: mapping.status,
        occurred_at: occurredAt,
        payment_failed: mapping.failed ?? false,
        ...(mapping.charge && p
          ? {
            payment: {
              id: p.id,
              amount_minor: p.amount,
              currency: p.currency,
              paid_at: p.created_at ? toIso(p.created_at) : occurredAt,
            },
          }
          : {}),
      },
    };
  }
  const test = connectionTest(body);
  if (test) return test;
  const event = (body as { event?: unknown } | null)?.event;
  const mapping = typeof event === "string" && Object.hasOwn(NEUTRAL_EVENTS, event)
    ? NEUTRAL_EVENTS[event]!
    : unknownEvent(event);
  const e = parseOr400(Neutral, body);
  if (mapping.charge && !e.payment) throw chargeWithoutPayment();
  if (!mapping.status) return { event: e.event, change: { kind: "none" } };
  return {
    event: e.event,
    change: {
      kind: "subscription",
      subscription_id: e.subscription_id,
      status: mapping.status,
      occurred_at: new Date(e.occurred_at).toISOString(),
      payment_failed: mapping.failed ?? false,
      ...(mapping.charge && e.payment
        ? { payment: { ...e.payment, paid_at: e.payment.paid_at ?? e.occurred_at } }
        : {}),
    },
  };
}

function hints(body: unknown): RoutingHints {
  if (isRazorpayEnvelope(body)) {
    const sub = razorpayEntity(body, "subscription");
    const pay = razorpayEntity(body, "payment");
    return {
      organizationId: note(sub?.notes, "organization_id") ?? note(pay?.notes, "organization_id"),
      subscriptionId: stringField(sub, "id"),
    };
  }
  const b = body as Record<string, unknown>;
  return {
    organizationId: stringField(b, "organization_id"),
    subscriptionId: stringField(b, "subscription_id"),
  };
}

export const checkoutSpec: ProviderSpec = {
  provider: "checkout",
  signatureHeaders: ["x-checkout-signature", "x-razorpay-signature"],
  hints,
  normalize,
};
