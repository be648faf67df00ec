// Settings > Integrations > Webhook Logs: deliveries with their attempts, and redelivery.
// @see docs/outbound-webhooks.md#webhook-logs and docs/architecture.md#webhook-logs-queries
import { z } from "zod";
import type { Tx } from "../../_shared/db.ts";
import { notFound } from "../../_shared/errors.ts";
import { decodeCursor, pageOf, withoutCursor } from "../cursor.ts";
import { recordAudit } from "../audit.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { Delivery, DeliveryDetail, DeliveryPage, type DeliveryRow, ListDeliveries } from "../schemas.ts";
import { mapSqlErrors } from "../sql_errors.ts";

// The event type is stored on the delivery, so a listing reads one table and each filter has its own
// index (see webhook_deliveries_log_*_idx in the outbound tables migration).
const DELIVERY_SELECT = `
  select d.id, d.event_id, d.endpoint_id, d.event_type, d.status, d.attempt_count, d.next_attempt_at,
         d.first_attempt_at, d.last_attempt_at, d.last_response_status, d.last_error, d.delivered_at, d.test,
         d.recovery_id, d.created_at, d.created_at::text as cursor_at
  from public.webhook_deliveries d`;

/**
 * The Webhook Logs listing: newest first by the keyset (created_at, id), `limit + 1` rows so the caller
 * knows whether there is a next page. Exported for the plan benchmark, which runs exactly this text.
 */
export function listDeliveriesQuery(
  q: z.infer<typeof ListDeliveries>,
  cursor: [string, string] | null,
  matches: BodyMatches = "scan",
): { text: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  const arg = (v: unknown) => `$${args.push(v)}`;
  // One message by its id or its event's (the webhook-id): the primary key and the (event_id, endpoint_id)
  // index, whatever the organization holds.
  if (q.q) {
    const id = arg(q.q);
    where.push(`(d.id = ${id}::uuid or d.event_id = ${id}::uuid)`);
  }
  if (q.endpoint_id) where.push(`d.endpoint_id = ${arg(q.endpoint_id)}`);
  if (q.event_type) where.push(`d.event_type = ${arg(q.event_type)}`);
  if (q.status) where.push(`d.status = ${arg(q.status)}`);
  // The same rule as private.webhook_status_class_matches (bulk retry).
  if (q.status_class === "none") where.push(`d.last_response_status is null`);
  else if (q.status_class) where.push(`d.last_response_status / 100 = ${arg(Number(q.status_class[0]))}`);
  if (q.since) where.push(`d.created_at >= ${arg(q.since)}::timestamptz`);
  if (q.until) where.push(`d.created_at < ${arg(q.until)}::timestamptz`);
  if (q.tests === "exclude") where.push(`not d.test`);
  if (q.tests === "only") where.push(`d.test`);
  // A recovery's deliveries: its own partial index (webhook_deliveries_recovery_idx).
  if (q.recovery_id) where.push(`d.recovery_id = ${arg(q.recovery_id)}::uuid`);
  // What is inside: the events whose body contains the text. Found first through the trigram index
  // (bodyMatches: at most MAX_BODY_MATCHES of them, then their deliveries by the event's index); a text
  // in more bodies than that is checked on each delivery's event while the listing walks its index
  // newest first: with more than 5,000 matches among a million, a page of 51 is found within about
  // 10,000 rows.
  if (q.contains) {
    where.push(
      matches === "scan"
        // A scalar subquery, not EXISTS: the planner would turn EXISTS into a join that reads every
        // event of the organization first; this stays a check on each row of the walk.
        ? `coalesce((select e.payload::text ilike ${arg(containsPattern(q.contains))}
                     from public.webhook_events e where e.id = d.event_id), false)`
        : `d.event_id = any (${arg(matches)}::uuid[])`,
    );
  }
  if (cursor) {
    // The cursor's timestamp goes in as text: a timestamptz parameter would pass through a
    // JavaScript Date in the driver and lose its microseconds.
    where.push(`(d.created_at, d.id) < (${arg(cursor[0])}::text::timestamptz, ${arg(cursor[1])}::uuid)`);
  }
  const text = `${DELIVERY_SELECT} ${where.length ? `where ${where.join(" and ")}` : ""}
    order by d.created_at desc, d.id desc limit ${arg(q.limit + 1)}`;
  return { text, args };
}

/** How many matching bodies the index step collects before the listing scans instead. */
export const MAX_BODY_MATCHES = 5000;

/** The events whose body holds the text (at most MAX_BODY_MATCHES), or "scan" when there are more. */
export type BodyMatches = string[] | "scan";

/** "…contains this text", as an ILIKE pattern. */
export const containsPattern = (text: string) => `%${likeEscaped(text)}%`;

/**
 * The first step of a search by content: the organization's events whose body holds the text, through
 * the trigram index (private.webhook_events_containing, 20261129100000_webhook_logs_search.sql).
 */
export async function bodyMatches(tx: Tx, text: string): Promise<BodyMatches> {
  const [r] = await tx<{ ids: string[] }[]>`
    select private.webhook_events_containing(${containsPattern(text)}, ${MAX_BODY_MATCHES + 1}) as ids`;
  return r!.ids.length > MAX_BODY_MATCHES ? "scan" : r!.ids;
}

/** How many of the newest deliveries a search checks one by one before it asks the index. */
export const WALK_FIRST_ROWS = 2000;

/**
 * A search by content, in two tries. First the newest WALK_FIRST_ROWS deliveries the other filters keep
 * are checked one by one: a text found in many bodies (a domain every address has) fills a page there,
 * which is then exactly the page (its first matches in order). Otherwise the trigram index finds the
 * matching bodies (bodyMatches), whose deliveries make the page, with those the walk found (the index is
 * built after the fact: see searchableUntil). The index's own cost grows with how common the text is (at
 * 1M bodies, about a second for one in every body), the walk's with how rare.
 */
export async function searchDeliveries<R extends { event_id: string }>(
  tx: Tx,
  q: z.infer<typeof ListDeliveries>,
  cursor: [string, string] | null,
): Promise<R[]> {
  const plain = listDeliveriesQuery({ ...q, contains: undefined, limit: WALK_FIRST_ROWS - 1 }, cursor);
  const pattern = `$${plain.args.length + 1}`;
  const page = await tx.unsafe<R[]>(
    `select w.* from (${plain.text}) w
     where coalesce((select e.payload::text ilike ${pattern} from public.webhook_events e where e.id = w.event_id),
                    false)
     order by w.created_at desc, w.id desc limit ${q.limit + 1}`,
    [...plain.args, containsPattern(q.contains!)] as never[],
  );
  if (page.length > q.limit) return page;
  // The index is built in batches after deliveries are recorded (webhook-search-index): what the walk
  // found among the newest rows may not be in it yet, so their events are matches too.
  const indexed = await bodyMatches(tx, q.contains!);
  const matches = indexed === "scan" ? indexed : [...new Set([...indexed, ...page.map((r) => r.event_id)])];
  const { text, args } = listDeliveriesQuery(q, cursor, matches);
  return await tx.unsafe<R[]>(text, args as never[]);
}

/**
 * How far the search index reaches: it is built after the fact, in batches (webhook-search-index), so a
 * delivery recorded since is found only among the newest WALK_FIRST_ROWS. Null before its first batch.
 */
async function searchableUntil(tx: Tx): Promise<string | null> {
  const [r] = await tx<{ at: Date | null }[]>`select private.webhook_searchable_until() as at`;
  return r!.at ? r!.at.toISOString() : null;
}

/** The text as a LIKE pattern matching itself: its %, _ and \ stand for themselves. */
export function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

type Row = DeliveryRow & { cursor_at?: string };

// The reference's examples (tests parse each with its schema).
const DELIVERY_EXAMPLE = {
  id: "7c9e2f14-3a5b-4c6d-8e7f-90a1b2c3d4e5",
  event_id: "e3c4d5e6-f708-4192-a3b4-c5d6e7f8091a",
  endpoint_id: "2b7e4c1a-9d3f-4e58-8a61-0c5d7f9e1b23",
  event_type: "donation.recorded",
  status: "delivered",
  attempt_count: 2,
  next_attempt_at: null,
  first_attempt_at: "2026-11-28T09:41:07.000Z",
  last_attempt_at: "2026-11-28T09:41:13.000Z",
  last_response_status: 200,
  last_error: null,
  delivered_at: "2026-11-28T09:41:13.000Z",
  test: false,
  recovery_id: null,
  created_at: "2026-11-28T09:41:07.000Z",
};
const FAILED_EXAMPLE = {
  ...DELIVERY_EXAMPLE,
  id: "0f1e2d3c-4b5a-4697-8877-6655a4b3c2d1",
  event_id: "e1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8",
  event_type: "member.created",
  status: "retrying",
  attempt_count: 3,
  next_attempt_at: "2026-11-28T10:12:00.000Z",
  last_response_status: 503,
  last_error: "HTTP 503",
  delivered_at: null,
  test: false,
  recovery_id: null,
  created_at: "2026-11-28T09:38:55.000Z",
  first_attempt_at: "2026-11-28T09:38:55.000Z",
  last_attempt_at: "2026-11-28T09:42:00.000Z",
};
const BODY_EXAMPLE = {
  id: DELIVERY_EXAMPLE.event_id,
  type: "donation.recorded",
  created_at: "2026-11-28T09:41:07.000Z",
  organization_id: "0c0ffee0-1234-4abc-8def-0123456789ab",
  data: {
    row: { id: "d0a1b2c3-d4e5-4f60-8172-93a4b5c6d7e8", amount_cents: 5000, currency: "GBP" },
    delta: { id: "d0a1b2c3-d4e5-4f60-8172-93a4b5c6d7e8", amount_cents: 5000, currency: "GBP" },
  },
};

export async function visibleDelivery(tx: Tx, deliveryId: string): Promise<DeliveryRow> {
  const [row] = await tx.unsafe<Row[]>(`${DELIVERY_SELECT} where d.id = $1`, [deliveryId]);
  if (!row) throw notFound("not_found", "No such delivery");
  return withoutCursor(row);
}

export const deliveryRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/deliveries",
      summary: "List deliveries, newest first",
      description: "Filtered by endpoint, event type, state, time, test deliveries (`tests`) and recovery " +
        "(`recovery_id`), or one found by id: `q` is a delivery id, or an event id (the `webhook-id` " +
        "header the receiver saw). `contains` finds the deliveries whose body contains a text (an " +
        "e-mail address, a payment id), in any letter case.",
      tag: "Webhook Logs",
      access: "admin",
      query: ListDeliveries,
      responses: {
        200: {
          description: "A page of deliveries",
          schema: DeliveryPage(Delivery),
          example: {
            data: [DELIVERY_EXAMPLE, FAILED_EXAMPLE],
            next_cursor:
              "WyIyMDI2LTExLTI4IDA5OjM4OjU1LjUxMjkzNCswMCIsIjBmMWUyZDNjLTRiNWEtNDY5Ny04ODc3LTY2NTVhNGIzYzJkMSJd",
          },
        },
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      const cursor = q.cursor ? decodeCursor(q.cursor) : null;
      if (q.contains) {
        const page = await asAdmin(deps, c, async (tx) => {
          const rows = await mapSqlErrors(() => searchDeliveries<Row>(tx, q, cursor));
          return { ...pageOf(rows, q.limit), searchable_until: await searchableUntil(tx) };
        });
        return c.json(page);
      }
      const rows = await asAdmin(deps, c, async (tx) => {
        const { text, args } = listDeliveriesQuery(q, cursor);
        return await tx.unsafe<Row[]>(text, args as never[]);
      });
      return c.json(pageOf(rows, q.limit));
    },
  ),
  route(
    {
      method: "get",
      path: "/deliveries/:id",
      summary: "Read one delivery with the body sent and every attempt",
      tag: "Webhook Logs",
      access: "admin",
      params: { id: z.uuid() },
      responses: {
        200: {
          description: "The delivery",
          schema: DeliveryDetail,
          example: {
            ...DELIVERY_EXAMPLE,
            body: JSON.stringify(BODY_EXAMPLE),
            payload: BODY_EXAMPLE,
            attempts: [{
              id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
              attempt_number: 1,
              attempted_at: "2026-11-28T09:41:07.000Z",
              duration_ms: 10000,
              response_status: null,
              error: "timeout after 10000 ms",
              response_excerpt: null,
              request_headers: {
                "content-type": "application/json",
                "webhook-id": DELIVERY_EXAMPLE.event_id,
                "webhook-timestamp": "1795772467",
                "webhook-signature": "v1,K5oZ…",
              },
              response_headers: null,
            }, {
              id: "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e",
              attempt_number: 2,
              attempted_at: "2026-11-28T09:41:13.000Z",
              duration_ms: 184,
              response_status: 200,
              error: null,
              response_excerpt: '{"ok":true}',
              request_headers: {
                "content-type": "application/json",
                "webhook-id": DELIVERY_EXAMPLE.event_id,
                "webhook-timestamp": "1795772473",
                "webhook-signature": "v1,pQ3n…",
              },
              response_headers: { "content-type": "application/json; charset=utf-8" },
            }],
          },
        },
        404: { description: "No such delivery" },
      },
    },
    async (c) => {
      const deliveryId = c.req.valid("param").id;
      const detail = await asAdmin(deps, c, async (tx) => {
        const delivery = await visibleDelivery(tx, deliveryId);
        // payload::text is exactly what the dispatcher signs and sends.
        const [event] = await tx<{ payload: Record<string, unknown>; body: string }[]>`
          select payload, payload::text as body from public.webhook_events where id = ${delivery.event_id}`;
        const attempts = await tx`
          select id, attempt_number, attempted_at, duration_ms, response_status, error, response_excerpt,
                 request_headers, response_headers
          from public.webhook_delivery_attempts where delivery_id = ${deliveryId}
          order by attempted_at, attempt_number`;
        return { ...delivery, body: event?.body ?? "{}", payload: event?.payload ?? {}, attempts };
      });
      return c.json(detail);
    },
  ),
  route(
    {
      method: "post",
      path: "/deliveries/:id/redeliver",
      summary: "Send this delivery again now",
      description: "With the same event id (`webhook-id`), so receivers can de-duplicate.",
      tag: "Webhook Logs",
      access: "admin",
      params: { id: z.uuid() },
      responses: {
        202: {
          description: "Queued again",
          schema: Delivery,
          example: {
            ...FAILED_EXAMPLE,
            status: "pending",
            next_attempt_at: "2026-11-28T10:05:00.000Z",
          },
        },
        404: { description: "No such delivery" },
        409: { description: "The endpoint is disabled, or the event was redacted (its person was erased)" },
      },
    },
    async (c) => {
      const deliveryId = c.req.valid("param").id;
      const row = await asAdmin(deps, c, async (tx, { organizationId }) => {
        const before = await visibleDelivery(tx, deliveryId);
        await mapSqlErrors(() => tx`select public.webhook_redeliver(${deliveryId})`);
        const after = await visibleDelivery(tx, deliveryId);
        await recordAudit(tx, organizationId, "delivery.redelivered", { type: "delivery", id: deliveryId }, {
          before: { status: before.status, endpoint_id: before.endpoint_id, event_type: before.event_type },
          after: { status: after.status },
        });
        return after;
      });
      return c.json(row, 202);
    },
  ),
];
