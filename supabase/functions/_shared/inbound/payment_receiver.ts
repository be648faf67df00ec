// What the two payment receivers (checkout-webhook, payments-webhook) share on top of the pipeline:
// routing by organization id, subscription id or payment id, and applying through
// private.process_payment_webhook. Each function passes its own ProviderSpec (shapes and event names).
import type { Sql } from "../db.ts";
import { notFound } from "../errors.ts";
import { storableInPostgres } from "../storable.ts";
import type { InboundOutcome } from "./pipeline.ts";
import type { ApplyResult, Change, ProviderSpec, Receiver, RoutingHints, Target } from "./types.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function paymentReceiver(spec: ProviderSpec): Receiver<Change> {
  return {
    provider: spec.provider,
    signatureHeaders: spec.signatureHeaders,
    keyFromHeaders: true,
    async route(sql, body, organizationSegment) {
      const hints: RoutingHints = body === undefined ? {} : safeHints(spec, body);
      const claimed = organizationSegment ?? hints.organizationId;
      // Not JSON and no organization in the URL: nobody to attribute it to (the pipeline answers 400).
      if (body === undefined && !claimed) return { targets: [], mode: "any" };
      const targets = await findTargets(sql, spec.provider, claimed, hints.subscriptionId, hints.paymentId);
      // The same answer for "no such organization", "no secret configured" and "nothing routes this".
      if (targets.length === 0) throw notFound();
      return { targets, mode: "any" };
    },
    eventName(body) {
      const event = (body as { event?: unknown } | null)?.event;
      return typeof event === "string" ? event : null;
    },
    normalize(body, context) {
      const change = spec.normalize(body, context.receivedAt).change;
      if (change.kind !== "none") return change;
      // Ignored, but still about someone: the ids it names record whose delivery it is (erasure).
      const { subscriptionId, paymentId } = safeHints(spec, body);
      return {
        ...change,
        ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
        ...(paymentId ? { payment_id: paymentId } : {}),
      };
    },
    async apply(sql, logId, change) {
      const [row] = await sql<{ result: ApplyResult }[]>`
        select private.process_payment_webhook(${logId}::uuid, ${sql.json(change as never)}) as result`;
      return row!.result;
    },
  };
}

/** The organizations that could have sent this, in a fixed order, each with its secret. */
async function findTargets(
  sql: Sql,
  provider: string,
  organizationId: string | undefined,
  subscriptionId: string | undefined,
  paymentId: string | undefined,
): Promise<Target[]> {
  const rows = await sql<{ organization_id: string; secret: string }[]>`
    select organization_id, secret
    from private.inbound_webhook_targets(${provider}, ${organizationId ?? null}::uuid,
                                         ${subscriptionId ?? null}, ${paymentId ?? null})`;
  return rows.map((r) => ({ organizationId: r.organization_id, secret: r.secret }));
}

function safeHints(spec: ProviderSpec, body: unknown): RoutingHints {
  try {
    const hints = spec.hints(body);
    if (hints.organizationId && !UUID.test(hints.organizationId)) delete hints.organizationId;
    // A hint is a query parameter: one PostgreSQL cannot hold routes nowhere rather than failing.
    for (const key of ["subscriptionId", "paymentId"] as const) {
      if (hints[key] !== undefined && !storableInPostgres(hints[key])) delete hints[key];
    }
    return hints;
  } catch {
    return {};
  }
}

export interface PaymentResponse {
  status: 200 | 202;
  body: { status: "processed" | "duplicate" | "unmatched"; log_id: string; outcome?: string };
}

/** The payment receivers' answer: one part, its log id and what applying it did. */
export function paymentResponse(outcome: InboundOutcome): PaymentResponse {
  const part = outcome.parts[0]!;
  if (part.status === "duplicate") return { status: 200, body: { status: "duplicate", log_id: part.logId } };
  if (part.status === "unmatched") return { status: 202, body: { status: "unmatched", log_id: part.logId } };
  return { status: 200, body: { status: "processed", log_id: part.logId, outcome: part.result?.outcome } };
}
