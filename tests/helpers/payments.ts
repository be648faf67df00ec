// Helpers for the payment webhook tests: an organization with a webhook secret, subscriptions, and a
// provider that signs (or mis-signs) its deliveries the documented way.
import { createTenant, sql } from "./db.ts";
import { hmacSha256Hex } from "../../supabase/functions/_shared/hmac.ts";

export async function paymentTenant(opts: { paymentsSecret?: string } = {}) {
  const tenant = await createTenant();
  const secret = `whsec_${crypto.randomUUID()}`;
  await sql()`
    insert into public.organization_settings (organization_id, webhook_secret, payments_webhook_secret)
    values (${tenant.organizationId}, ${secret}, ${opts.paymentsSecret ?? null})`;
  return { ...tenant, secret };
}

export async function createSubscription(
  organizationId: string,
  opts: { id?: string; status?: string; memberId?: string } = {},
): Promise<{ id: string; gatewayId: string }> {
  const gatewayId = opts.id ?? `sub_${crypto.randomUUID().slice(0, 12)}`;
  const [row] = await sql()<{ id: string }[]>`
    insert into public.recurring_donations (organization_id, gateway_subscription_id, status, member_id,
                                            amount_minor, currency, interval)
    values (${organizationId}, ${gatewayId}, ${opts.status ?? "pending"}, ${
    opts.memberId ?? null
  }, 50000, 'INR', 'month')
    returning id`;
  return { id: row!.id, gatewayId };
}

export interface Delivery {
  /** Secret to sign with; omit to send no signature. */
  secret?: string;
  header?: string;
  key?: string;
  headers?: Record<string, string>;
  /** Sign this instead of the body (a wrong signature). */
  signOver?: string;
}

export interface Reply {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
}

export async function deliver(url: string, body: unknown, d: Delivery = {}): Promise<Reply> {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const headers: Record<string, string> = { "content-type": "application/json", ...d.headers };
  if (d.secret) {
    headers[d.header ?? "x-checkout-signature"] = await hmacSha256Hex(d.secret, d.signOver ?? raw);
  }
  if (d.key) headers["idempotency-key"] = d.key;
  const res = await fetch(url, { method: "POST", body: raw, headers });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch { /* not JSON */ }
  return { status: res.status, json };
}

export const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** Razorpay's subscription webhook envelope. */
export function razorpaySubscriptionEvent(
  event: string,
  subscriptionId: string,
  at: string,
  opts: { payment?: { id: string; amount: number; currency?: string }; notes?: Record<string, string> } = {},
) {
  return {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event,
    contains: opts.payment ? ["subscription", "payment"] : ["subscription"],
    payload: {
      subscription: {
        entity: {
          id: subscriptionId,
          entity: "subscription",
          plan_id: "plan_BvrFKjSxauOH7N",
          customer_id: "cust_C0WlbKhp3aLA7W",
          status: event.split(".")[1],
          quantity: 1,
          notes: opts.notes ?? [],
          charge_at: unix(at) + 86400 * 30,
          total_count: 12,
          paid_count: opts.payment ? 1 : 0,
        },
      },
      ...(opts.payment
        ? {
          payment: {
            entity: {
              id: opts.payment.id,
              entity: "payment",
              amount: opts.payment.amount,
              currency: opts.payment.currency ?? "INR",
              status: "captured",
              invoice_id: "inv_C0WlbPRp4vQ3sj",
              method: "card",
              captured: true,
              notes: [],
              created_at: unix(at),
            },
          },
        }
        : {}),
    },
    created_at: unix(at),
  };
}

export async function logRows(organizationId: string) {
  return await sql()<
    {
      id: string;
      status: string;
      signature_valid: boolean | null;
      idempotency_key: string;
      event: string | null;
      deliveries: number;
      attempts: number;
      error: string | null;
      payload: unknown;
      raw_body: string | null;
    }[]
  >`select id, status, signature_valid, idempotency_key, event, deliveries, attempts, error, payload, raw_body
    from public.inbound_webhook_log where organization_id = ${organizationId} order by received_at, id`;
}

export async function subscriptionRow(id: string) {
  const [row] = await sql()<{ status: string; failure_count: number; last_event_at: Date | null }[]>`
    select status, failure_count, last_event_at from public.recurring_donations where id = ${id}`;
  return row!;
}

export async function donationsOf(organizationId: string) {
  return await sql()<
    {
      id: string;
      gateway_payment_id: string;
      amount_minor: string;
      currency: string;
      source: string;
      recurring_donation_id: string | null;
      refunded_minor: string;
      refund_status: string;
    }[]
  >`select id, gateway_payment_id, amount_minor::text, currency, source, recurring_donation_id,
           refunded_minor::text, refund_status
    from public.donations where organization_id = ${organizationId} order by created_at, id`;
}
