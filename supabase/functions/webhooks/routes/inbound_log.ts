// The inbound webhook log (every checkout, card-payment and WhatsApp gateway delivery, verified or
// not), for organization admins: read it, and replay entries through the code path a live delivery
// takes, in the receiver function that owns them (receivers.ts). People only: API keys are for webhook
// configuration and never see payment data or messages. @see docs/inbound-webhooks.md#replay
import { z } from "zod";
import type { Context } from "hono";
import type { AppDeps } from "../../_shared/app.ts";
import { notFound } from "../../_shared/errors.ts";
import { type ActorEnv, asAdmin } from "../actor.ts";
import { recordAudit } from "../audit.ts";
import { askReceiverToReplay, INBOUND_PROVIDERS, type InboundProvider } from "../receivers.ts";
import { route, type RouteFactory } from "../route.ts";
import { Page } from "../schemas.ts";
import { decodeCursor, pageOf, withoutCursor } from "../cursor.ts";

const LOG_STATES = ["received", "processed", "unmatched", "failed", "rejected", "unverified"] as const;

const LogEntry = z.object({
  id: z.uuid(),
  provider: z.enum(INBOUND_PROVIDERS),
  account_id: z.uuid().nullable().describe(
    "WhatsApp: the gateway account (phone number) the entry came in for",
  ),
  event: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  status: z.enum(LOG_STATES),
  signature_valid: z.boolean().nullable(),
  error: z.string().nullable(),
  deliveries: z.number().int().describe("How many times the provider sent it"),
  attempts: z.number().int().describe("How many times it was applied"),
  body_bytes: z.number().int().describe(
    "Bytes received; for a row counting refused deliveries (unverified, or not attributable) their total",
  ),
  received_at: z.string(),
  last_received_at: z.string(),
  processed_at: z.string().nullable(),
});
const LogDetail = LogEntry.extend({
  payload: z.unknown().describe("The body as received (JSON)"),
  headers: z.record(z.string(), z.unknown()),
  result: z.unknown().nullable(),
});
const ListLog = z.object({
  provider: z.enum(INBOUND_PROVIDERS).optional(),
  status: z.enum(LOG_STATES).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});
const Outcome = z.object({
  log_id: z.uuid(),
  status: z.enum(["processed", "duplicate", "unmatched", "failed", "skipped"]),
  outcome: z.string().optional(),
  reason: z.string().optional(),
});

const COLUMNS =
  `id, provider, account_id, event, idempotency_key, status, signature_valid, error, deliveries, attempts,
  body_bytes::float8 as body_bytes, received_at, last_received_at, processed_at, received_at::text as cursor_at`;
type Row = z.infer<typeof LogEntry> & { cursor_at?: string };

// The reference's examples (tests parse each with its schema).
const ENTRY_EXAMPLE = {
  id: "60106e03-4c1a-4d8e-9a37-0f2b8c1d2e3f",
  provider: "checkout",
  account_id: null,
  event: "subscription.charged",
  idempotency_key: "evt_Nq3P8xVbE1sKzA",
  status: "processed",
  signature_valid: true,
  error: null,
  deliveries: 1,
  attempts: 1,
  body_bytes: 1184,
  received_at: "2026-11-28T09:40:02.000Z",
  last_received_at: "2026-11-28T09:40:02.000Z",
  processed_at: "2026-11-28T09:40:02.000Z",
};
const UNMATCHED_EXAMPLE = {
  ...ENTRY_EXAMPLE,
  id: "71217f14-5d2b-4e9f-8b48-1a3c9d2e3f40",
  event: "subscription.cancelled",
  idempotency_key: "evt_Nq3Q1aRfT7mWcB",
  status: "unmatched",
  body_bytes: 902,
  received_at: "2026-11-28T09:12:44.000Z",
  last_received_at: "2026-11-28T09:12:44.000Z",
  processed_at: "2026-11-28T09:12:44.000Z",
};
const REFUSED_EXAMPLE = {
  ...ENTRY_EXAMPLE,
  id: "82328025-6e3c-4fa0-9c59-2b4d0e3f4051",
  event: null,
  idempotency_key: null,
  status: "unverified",
  signature_valid: false,
  error: "signature mismatch",
  deliveries: 3,
  attempts: 0,
  body_bytes: 3120,
  received_at: "2026-11-28T08:03:10.000Z",
  last_received_at: "2026-11-28T08:47:31.000Z",
  processed_at: null,
};

/** The audit entry of a replay, in a transaction of the caller's after the receiver answered. */
function recordReplay(
  deps: AppDeps,
  c: Context<ActorEnv>,
  action: "inbound.replayed" | "inbound.replayed_failed",
  target: { type: string; id: string },
  after: Record<string, unknown>,
) {
  return asAdmin(
    deps,
    c,
    (tx, { organizationId }) => recordAudit(tx, organizationId, action, target, { after }),
  );
}

export const inboundLogRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/inbound-log",
      summary: "List inbound webhooks (payments and WhatsApp), newest first",
      tag: "Inbound payment webhooks",
      access: "user",
      refusal: "API keys cannot read or replay the inbound payment log",
      query: ListLog,
      responses: {
        200: {
          description: "A page of log entries",
          schema: Page(LogEntry),
          example: {
            data: [ENTRY_EXAMPLE, UNMATCHED_EXAMPLE, REFUSED_EXAMPLE],
            next_cursor:
              "WyIyMDI2LTExLTI4IDA4OjAzOjEwLjQwMjExOCswMCIsIjgyMzI4MDI1LTZlM2MtNGZhMC05YzU5LTJiNGQwZTNmNDA1MSJd",
          },
        },
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      const cursor = q.cursor ? decodeCursor(q.cursor) : null;
      const rows = await asAdmin(deps, c, (tx) =>
        tx.unsafe<Row[]>(
          `select ${COLUMNS} from public.inbound_webhook_log
           where ($1::text is null or provider = $1) and ($2::text is null or status = $2)
             and ($3::text is null or (received_at, id) < ($3::text::timestamptz, $4::uuid))
           order by received_at desc, id desc limit $5`,
          [q.provider ?? null, q.status ?? null, cursor?.[0] ?? null, cursor?.[1] ?? null, q.limit + 1],
        ));
      return c.json(pageOf(rows, q.limit));
    },
  ),
  route(
    {
      method: "get",
      path: "/inbound-log/:id",
      summary: "Read one inbound webhook with its body",
      tag: "Inbound payment webhooks",
      access: "user",
      refusal: "API keys cannot read or replay the inbound payment log",
      params: { id: z.uuid() },
      responses: {
        200: {
          description: "The entry",
          schema: LogDetail,
          example: {
            ...ENTRY_EXAMPLE,
            payload: {
              event: "subscription.charged",
              subscription_id: "sub_NqJ3x8vKp2LmQa",
              payment_id: "pay_NqJ4c1ZwYb7TfR",
              amount: 5000,
              currency: "GBP",
              occurred_at: "2026-11-28T09:40:01Z",
            },
            headers: {
              "content-type": "application/json",
              "user-agent": "Razorpay-Webhook/v1",
              "x-razorpay-event-id": "evt_Nq3P8xVbE1sKzA",
            },
            result: { outcome: "applied", donation_created: true },
          },
        },
        404: { description: "No such entry" },
      },
    },
    async (c) => {
      const logId = c.req.valid("param").id;
      const row = await asAdmin(deps, c, async (tx) => {
        const [r] = await tx.unsafe<Row[]>(
          `select ${COLUMNS}, coalesce(payload, to_jsonb(raw_body)) as payload, headers, result
           from public.inbound_webhook_log where id = $1`,
          [logId],
        );
        return r;
      });
      if (!row) throw notFound("not_found", "No such log entry");
      return c.json(withoutCursor(row));
    },
  ),
  route(
    {
      method: "post",
      path: "/inbound-log/:id/replay",
      summary: "Apply a logged payload again",
      description: "Through the code path a live delivery takes; one applied already changes nothing.",
      tag: "Inbound payment webhooks",
      access: "user",
      refusal: "API keys cannot read or replay the inbound payment log",
      params: { id: z.uuid() },
      responses: {
        200: {
          description: "What the replay did",
          schema: Outcome,
          example: { log_id: UNMATCHED_EXAMPLE.id, status: "processed", outcome: "applied" },
        },
        404: { description: "No such entry" },
        503: { description: "The receiver function that owns the entry could not be reached; retry later" },
      },
    },
    async (c) => {
      const logId = c.req.valid("param").id;
      // Visibility through RLS first (another organization's id is simply not found), then the replay
      // itself in the receiver that owns the row, scoped to the admin's organization once more.
      const { organizationId, provider } = await asAdmin(deps, c, async (tx, { organizationId }) => {
        const [r] = await tx<{ provider: InboundProvider }[]>`
          select provider from public.inbound_webhook_log where id = ${logId}`;
        if (!r) throw notFound("not_found", "No such log entry");
        return { organizationId, provider: r.provider };
      });
      const [outcome] = await askReceiverToReplay(deps.config, provider, {
        organization_id: organizationId,
        log_id: logId,
      });
      if (!outcome) throw notFound("not_found", "No such log entry");
      // The receiver applied it in its own transaction (another function): the entry follows with the
      // outcome. A replay applies a logged payload at most once, so this records a request, not data.
      await recordReplay(deps, c, "inbound.replayed", { type: "inbound_log", id: logId }, {
        provider,
        status: outcome.status,
        outcome: outcome.outcome,
      });
      return c.json(outcome);
    },
  ),
  route(
    {
      method: "post",
      path: "/inbound-log/replay-failed",
      summary: "Replay every failed or unmatched inbound webhook",
      description: "Every such entry of the organization, oldest first, one at a time.",
      tag: "Inbound payment webhooks",
      access: "user",
      refusal: "API keys cannot read or replay the inbound payment log",
      responses: {
        200: {
          description: "One outcome per entry",
          schema: z.object({ data: z.array(Outcome) }),
          example: {
            data: [
              { log_id: UNMATCHED_EXAMPLE.id, status: "processed", outcome: "applied" },
              {
                log_id: "93439136-7f4d-4ab1-8d6a-3c5e1f405162",
                status: "unmatched",
                outcome: "unmatched",
              },
            ],
          },
        },
        503: { description: "A receiver function could not be reached; retry later" },
      },
    },
    async (c) => {
      const organizationId = await asAdmin(
        deps,
        c,
        (_tx, { organizationId }) => Promise.resolve(organizationId),
      );
      const data = [];
      // Receiver by receiver, each oldest first.
      for (const provider of INBOUND_PROVIDERS) {
        data.push(...await askReceiverToReplay(deps.config, provider, { organization_id: organizationId }));
      }
      const outcomes: Record<string, number> = {};
      for (const o of data) outcomes[o.outcome ?? o.status] = (outcomes[o.outcome ?? o.status] ?? 0) + 1;
      await recordReplay(deps, c, "inbound.replayed_failed", { type: "organization", id: organizationId }, {
        replayed: data.length,
        outcomes,
      });
      return c.json({ data });
    },
  ),
];
