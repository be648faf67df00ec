// Razorpay's webhook payloads in the shape of its documented samples (Webhooks > Sample Payloads:
// Subscriptions, Payments, Refunds): full entities with every field the samples show, including the
// ones we do not use, `notes` as an empty array, and the subscription.activated sample for an immediate
// start with an upfront amount, which carries `created_at` inside `payload` instead of at the top.
// Ids and times are parameters so each test gets its own.

export interface SampleIds {
  subscriptionId: string;
  paymentId: string;
  refundId?: string;
  /** Unix seconds of the event. */
  at: number;
  amount?: number;
}

export function subscriptionEntity(ids: SampleIds, status: string) {
  return {
    id: ids.subscriptionId,
    entity: "subscription",
    plan_id: "plan_00000000000001",
    customer_id: "cust_00000000000001",
    status,
    type: 2,
    current_start: ids.at,
    current_end: ids.at + 30 * 86400,
    ended_at: status === "cancelled" || status === "completed" ? ids.at : null,
    quantity: 1,
    notes: [],
    charge_at: ids.at + 30 * 86400,
    start_at: ids.at,
    end_at: ids.at + 365 * 86400,
    auth_attempts: 0,
    total_count: 12,
    paid_count: 1,
    customer_notify: true,
    created_at: ids.at - 3600,
    expire_by: null,
    short_url: null,
    has_scheduled_changes: false,
    change_scheduled_at: null,
    source: "api",
    payment_method: "card",
    offer_id: null,
    remaining_count: 11,
  };
}

export function paymentEntity(ids: SampleIds, status: "authorized" | "captured" | "failed") {
  return {
    id: ids.paymentId,
    entity: "payment",
    amount: ids.amount ?? 2500,
    currency: "INR",
    status,
    order_id: "order_00000000000001",
    invoice_id: "inv_00000000000001",
    international: false,
    method: "card",
    amount_refunded: 0,
    amount_transferred: 0,
    refund_status: null,
    captured: status === "captured" ? "1" : false,
    description: "Recurring Payment via Subscription",
    card_id: "card_00000000000001",
    card: {
      id: "card_00000000000001",
      entity: "card",
      name: "Gaurav Kumar",
      last4: "1111",
      network: "Visa",
      type: "debit",
      issuer: null,
      international: false,
      emi: false,
      expiry_month: 2,
      expiry_year: 2030,
    },
    bank: null,
    wallet: null,
    vpa: null,
    email: "gaurav.kumar@example.com",
    contact: "+919876543210",
    customer_id: "cust_00000000000001",
    token_id: null,
    notes: [],
    fee: status === "captured" ? 0 : null,
    tax: status === "captured" ? 0 : null,
    error_code: status === "failed" ? "BAD_REQUEST_ERROR" : null,
    error_description: status === "failed" ? "Payment failed due to insufficient funds" : null,
    error_source: status === "failed" ? "customer" : null,
    error_step: status === "failed" ? "payment_authorization" : null,
    error_reason: status === "failed" ? "insufficient_funds" : null,
    acquirer_data: { auth_code: status === "failed" ? null : "828553" },
    created_at: ids.at,
  };
}

export function refundEntity(ids: SampleIds, status: "pending" | "processed" | "failed") {
  return {
    id: ids.refundId ?? "rfnd_00000000000001",
    entity: "refund",
    amount: ids.amount ?? 2500,
    currency: "INR",
    payment_id: ids.paymentId,
    notes: { comment: "Refund of duplicate donation" },
    receipt: null,
    acquirer_data: { arn: status === "processed" ? "10000000000000" : null },
    created_at: ids.at,
    batch_id: null,
    status,
    speed_processed: "normal",
    speed_requested: "optimum",
  };
}

const envelope = (event: string, at: number, payload: Record<string, unknown>) => ({
  entity: "event",
  account_id: "acc_BFQ7uQEaa7j2z7",
  event,
  contains: Object.keys(payload),
  payload,
  created_at: at,
});

/** Which entities each documented subscription sample carries. */
const SUBSCRIPTION_SAMPLES: Record<string, { status: string; payment?: "captured" | "failed" }> = {
  "subscription.authenticated": { status: "authenticated" },
  "subscription.activated": { status: "active" },
  "subscription.charged": { status: "active", payment: "captured" },
  "subscription.pending": { status: "pending", payment: "failed" },
  "subscription.halted": { status: "halted", payment: "failed" },
  "subscription.paused": { status: "paused" },
  "subscription.resumed": { status: "active" },
  "subscription.updated": { status: "active" },
  "subscription.cancelled": { status: "cancelled" },
  "subscription.completed": { status: "completed", payment: "captured" },
};
export const SUBSCRIPTION_EVENTS = Object.keys(SUBSCRIPTION_SAMPLES);

export function subscriptionSample(event: string, ids: SampleIds) {
  const s = SUBSCRIPTION_SAMPLES[event]!;
  return envelope(event, ids.at, {
    subscription: { entity: subscriptionEntity(ids, s.status) },
    ...(s.payment ? { payment: { entity: paymentEntity(ids, s.payment) } } : {}),
  });
}

/** subscription.activated, "Immediate start date/Upfront amount": created_at inside payload. */
export function activatedUpfrontSample(ids: SampleIds) {
  return {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event: "subscription.activated",
    contains: ["subscription"],
    payload: {
      subscription: { entity: subscriptionEntity(ids, "active") },
      created_at: ids.at,
    },
  };
}

export const PAYMENT_EVENTS = ["payment.authorized", "payment.captured", "payment.failed"] as const;

export function paymentSample(event: typeof PAYMENT_EVENTS[number], ids: SampleIds) {
  const status = event.split(".")[1] as "authorized" | "captured" | "failed";
  return envelope(event, ids.at, { payment: { entity: paymentEntity(ids, status) } });
}

export const REFUND_EVENTS = [
  "refund.created",
  "refund.speed_changed",
  "refund.processed",
  "refund.failed",
] as const;

export function refundSample(event: typeof REFUND_EVENTS[number], ids: SampleIds) {
  const status = event === "refund.processed"
    ? "processed"
    : event === "refund.failed"
    ? "failed"
    : "pending";
  return envelope(event, ids.at, {
    refund: { entity: refundEntity(ids, status) },
    payment: { entity: { ...paymentEntity(ids, "captured"), amount_refunded: ids.amount ?? 2500 } },
  });
}
