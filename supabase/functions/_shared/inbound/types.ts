// What the inbound pipeline (pipeline.ts) needs from a receiver, and the shapes every inbound payment
// webhook is reduced to before it touches the database.
import type { Sql } from "../db.ts";

/** The log's provider column: which receiver owns a row (and replays it). */
export type Provider = "checkout" | "payments" | "whatsapp";

/** An organization (and, for WhatsApp, gateway account) that may have signed a body, with its secret. */
export interface Target {
  organizationId: string;
  accountId?: string;
  secret: string;
  /** Mode "each": the routing key (WhatsApp: the phone-number id) this target is a candidate for. */
  key?: string;
}

export interface Routing {
  targets: Target[];
  /**
   * "any": the body belongs to the one target whose secret verifies it (payments: ids are unique per
   * organization only). "each": the body names several keys (WhatsApp: phone-number ids), each with
   * its candidates in order of preference; each key goes to its first candidate whose secret verifies
   * the body, keys none verifies are skipped, and a body no key verifies for is refused (401), also
   * when it names only keys nothing is known for.
   */
  mode: "any" | "each";
  /** Routing keys the body names that nothing is known for (logged, boundedly). */
  unknown?: string[];
}

/** One target's share of a verified body: what is logged as one row and applied as one change. */
export interface Part {
  target: Target;
  body: unknown;
}

export interface ApplyResult {
  /** ignored: a verified event that changes nothing we keep (e.g. subscription.updated). */
  outcome: "applied" | "stale" | "unmatched" | "duplicate" | "ignored";
  [k: string]: unknown;
}

/** Whose part is being normalized, and when it was received (live: now; replay: the log's time). */
export interface NormalizeContext {
  organizationId: string;
  accountId: string | null;
  receivedAt: Date;
}

/** Everything that differs between receivers; the stages themselves are pipeline.ts. */
export interface Receiver<C = unknown> {
  provider: Provider;
  /** Signature headers in order of preference; the first one present is checked. */
  signatureHeaders: readonly string[];
  /** The Idempotency-Key header (or x-razorpay-event-id) names a delivery; otherwise only its bytes do. */
  keyFromHeaders: boolean;
  /**
   * Who may have signed this body (body undefined: it is not JSON). No target at all: the receiver
   * either throws (404) or returns none, and the pipeline answers with no parts.
   */
  route(sql: Sql, body: unknown, organizationSegment: string | undefined): Promise<Routing>;
  /** The verified targets' shares; absent: one part, the whole body, for the single verified target. */
  split?(body: unknown, verified: Target[]): Part[];
  /** The event name an admin reads in the log (the body is verified by then). */
  eventName(body: unknown): string | null;
  /** Validates and maps a part; throws a 400 AppError for a malformed body or an unknown event. */
  normalize(body: unknown, context: NormalizeContext): C;
  /** Applies one logged part in one statement that also marks its log row (see the migrations). */
  apply(sql: Sql, logId: string, change: C): Promise<ApplyResult>;
}

/** Stored states of a recurring donation (the CHECK on recurring_donations.status). */
export type SubscriptionStatus =
  | "pending"
  | "authenticated"
  | "active"
  | "past_due"
  | "paused"
  | "halted"
  | "cancelled"
  | "completed";

export interface Payment {
  id: string;
  amount_minor: number;
  currency: string;
  /** ISO time the provider took the money. */
  paid_at?: string;
}

export type Change =
  | {
    kind: "subscription";
    subscription_id: string;
    status: SubscriptionStatus;
    occurred_at: string;
    /** A failed charge: counts towards recurring_donations.failure_count. */
    payment_failed: boolean;
    /** Present on a charge: recorded as a donation exactly once. */
    payment?: Payment;
  }
  | {
    kind: "refund";
    refund: {
      id: string;
      payment_id: string;
      amount_minor: number;
      currency: string;
      status: "pending" | "processed" | "failed";
      occurred_at: string;
    };
  }
  | {
    kind: "payment";
    payment: Payment;
    /** Set for a recurring-payment notification: the donation is linked to that subscription. */
    subscription_id?: string;
  }
  /**
   * A verified event we accept and log but that changes nothing (processed, outcome "ignored"); the
   * provider ids it names link its log row to the members they belong to.
   */
  | { kind: "none"; subscription_id?: string; payment_id?: string };

export interface NormalizedEvent {
  /** The provider's event name, as logged. */
  event: string;
  change: Change;
}

/** What a payload says about where it belongs, read before the signature can be checked. */
export interface RoutingHints {
  organizationId?: string;
  subscriptionId?: string;
  paymentId?: string;
}

/** What checkout-webhook and payments-webhook each say about their provider (payment_receiver.ts). */
export interface ProviderSpec {
  provider: "checkout" | "payments";
  /** Signature headers in order of preference; the first one present is checked. */
  signatureHeaders: readonly string[];
  /** Never throws: a payload it cannot read yields no hints. */
  hints(body: unknown): RoutingHints;
  /** Validates and maps a payload; throws a 400 AppError for a malformed body or an unknown event. */
  normalize(body: unknown, receivedAt: Date): NormalizedEvent;
}
