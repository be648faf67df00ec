// The shapes every inbound payment webhook is reduced to before it touches the database. Provider
// modules turn their payloads into these; the pipeline and the SQL functions only ever see these.

export type Provider = "checkout" | "payments";

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
  };

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

/** What the shared pipeline needs to know about one receiver. */
export interface ProviderSpec {
  provider: Provider;
  /** Signature headers in order of preference; the first one present is checked. */
  signatureHeaders: readonly string[];
  /** Never throws: a payload it cannot read yields no hints. */
  hints(body: unknown): RoutingHints;
  /** Validates and maps a payload; throws a 400 AppError for a malformed body or an unknown event. */
  normalize(body: unknown): NormalizedEvent;
}
