// Card-payment provider events: refund confirmations and captured (one-off or recurring) payments, in
// the neutral shape and in Razorpay's `refund.*` and `payment.captured` shapes.
// @see docs/inbound-webhooks.md#requests and docs/inbound-webhooks.md#refunds
import { z } from "zod";
import type { NormalizedEvent, ProviderSpec, RoutingHints } from "../_shared/inbound/types.ts";
import {
  amountMinor,
  connectionTest,
  currency,
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
  RazorpayRefund,
  requirePayload,
  stringField,
  toIso,
  unknownEvent,
} from "../_shared/inbound/shapes.ts";

type RefundStatus = "pending" | "processed" | "failed";

/**
 * Refund events (same names in both shapes): created -> pending, then processed or failed. Razorpay's
 * speed_changed only says the refund is still under way: it records the refund as pending if it is new
 * and never moves a finished one.
 */
export const REFUND_EVENTS: Record<string, RefundStatus> = {
  "refund.created": "pending",
  "refund.speed_changed": "pending",
  "refund.processed": "processed",
  "refund.failed": "failed",
};
export const PAYMENT_EVENTS = ["payment.captured"];

const NeutralRefundEvent = z.object({
  event: z.string(),
  occurred_at: isoTime,
  organization_id: organizationId,
  refund: z.object({ id: providerId, payment_id: providerId, amount_minor: amountMinor, currency }),
});

const NeutralPaymentEvent = z.object({
  event: z.string(),
  occurred_at: isoTime,
  organization_id: organizationId,
  payment: NeutralPayment.extend({ subscription_id: providerId.optional() }),
});

const RazorpayRefundEvent = envelope({ refund: entityOf(RazorpayRefund) });
const RazorpayPaymentEvent = envelope({
  payment: entityOf(RazorpayPayment.extend({ subscription_id: providerId.nullish() })),
});

function normalize(body: unknown, receivedAt: Date): NormalizedEvent {
  const event = (body as { event?: unknown } | null)?.event;
  if (typeof event !== "string") return unknownEvent(event);
  const razorpay = isRazorpayEnvelope(body);
  if (razorpay) requirePayload(body);
  const test = razorpay ? undefined : connectionTest(body);
  if (test) return test;
  // Verified, and nothing for us to do: any other Razorpay event is acknowledged and logged as ignored.
  // An authorization is not money taken (capture follows); a failed attempt is retried by the donor or,
  // for a subscription, reported by subscription.pending; payment.downtime.* and events added to the
  // webhook later change nothing we keep. A 4xx would only make Razorpay retry for a day, then disable
  // the whole webhook.
  if (razorpay && !(Object.hasOwn(REFUND_EVENTS, event) || PAYMENT_EVENTS.includes(event))) {
    return { event, change: { kind: "none" } };
  }

  if (Object.hasOwn(REFUND_EVENTS, event)) {
    const status = REFUND_EVENTS[event]!;
    if (razorpay) {
      const e = parseOr400(RazorpayRefundEvent, body);
      const r = e.payload.refund.entity;
      return {
        event,
        change: {
          kind: "refund",
          refund: {
            id: r.id,
            payment_id: r.payment_id,
            amount_minor: r.amount,
            currency: r.currency,
            status,
            occurred_at: razorpayEventTime(body, receivedAt, r.created_at),
          },
        },
      };
    }
    const e = parseOr400(NeutralRefundEvent, body);
    return {
      event,
      change: {
        kind: "refund",
        refund: { ...e.refund, status, occurred_at: new Date(e.occurred_at).toISOString() },
      },
    };
  }

  if (PAYMENT_EVENTS.includes(event)) {
    if (razorpay) {
      const e = parseOr400(RazorpayPaymentEvent, body);
      const p = e.payload.payment.entity;
      // Razorpay's payment entity names its invoice, not its subscription; the merchant's
      // notes.subscription_id (or a subscription_id field, where present) marks a recurring payment.
      const subscriptionId = p.subscription_id ?? note(p.notes, "subscription_id");
      return {
        event,
        change: {
          kind: "payment",
          payment: {
            id: p.id,
            amount_minor: p.amount,
            currency: p.currency,
            paid_at: p.created_at ? toIso(p.created_at) : razorpayEventTime(body, receivedAt),
          },
          ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
        },
      };
    }
    const e = parseOr400(NeutralPaymentEvent, body);
    const { subscription_id, ...payment } = e.payment;
    return {
      event,
      change: {
        kind: "payment",
        payment: { ...payment, paid_at: payment.paid_at ?? e.occurred_at },
        ...(subscription_id ? { subscription_id } : {}),
      },
    };
  }
  return unknownEvent(event);
}

function hints(body: unknown): RoutingHints {
  if (isRazorpayEnvelope(body)) {
    const refund = razorpayEntity(body, "refund");
    const payment = razorpayEntity(body, "payment");
    return {
      organizationId: note(refund?.notes, "organization_id") ?? note(payment?.notes, "organization_id"),
      subscriptionId: stringField(payment, "subscription_id") ?? note(payment?.notes, "subscription_id"),
      paymentId: stringField(refund, "payment_id") ?? stringField(payment, "id"),
    };
  }
  const b = body as Record<string, unknown>;
  const refund = b.refund as Record<string, unknown> | undefined;
  const payment = b.payment as Record<string, unknown> | undefined;
  return {
    organizationId: stringField(b, "organization_id"),
    subscriptionId: stringField(payment, "subscription_id"),
    paymentId: stringField(refund, "payment_id") ?? stringField(payment, "id"),
  };
}

export const paymentsSpec: ProviderSpec = {
  provider: "payments",
  signatureHeaders: ["x-payments-signature", "x-razorpay-signature"],
  hints,
  normalize,
};
