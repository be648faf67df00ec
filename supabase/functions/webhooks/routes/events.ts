// The events feed: an organization's events, newest first or forward from a cursor, with a long poll;
// each event with the body and webhook-id its deliveries carry. For pollers (Zapier, Make, n8n) and the
// local forwarder (scripts/listen.ts). @see docs/configuration-api.md#the-events-feed
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppDeps } from "../../_shared/app.ts";
import { AppError, badRequest, notFound } from "../../_shared/errors.ts";
import { type ActorEnv, asAdmin } from "../actor.ts";
import { EVENT_CATALOGUE, EVENT_TYPES } from "../catalogue.ts";
import {
  decodeFeedCursor,
  encodeFeedCursor,
  expired,
  feedHorizon,
  feedPage,
  type FeedRow,
  headPosition,
  type Position,
} from "../feed.ts";
import { route, type RouteFactory } from "../route.ts";

/** Waiting requests (wait > 0) one organization may hold open on one instance of the function. */
export const MAX_WAITING_PER_ORGANIZATION = 10;
/** How often a waiting request asks again: a new event is answered within this (plus a query). */
export const POLL_INTERVAL_MS = 400;
const waiting = new Map<string, number>();

const FeedEvent = z.object({
  id: z.uuid().describe("The event's id"),
  webhook_id: z.uuid().describe("The `webhook-id` (and `x-webhook-id`) header every delivery of it carries"),
  type: z.string(),
  created_at: z.string(),
  cursor: z.string().describe("This event's place in the feed: pass as `after` to continue after it"),
  payload: z.record(z.string(), z.unknown()).describe("The JSON body its deliveries carry"),
});

const ListEvents = z.object({
  after: z.string().max(300).optional().describe(
    "A cursor (`next_cursor`, or an event's `cursor`): the events after it, oldest first",
  ),
  before: z.string().max(300).optional().describe("`older_cursor` of the previous page: older events"),
  event_type: z.string().max(400).optional().describe("One event type, or several separated by commas"),
  since: z.iso.datetime({ offset: true }).optional().describe("Created at or after"),
  until: z.iso.datetime({ offset: true }).optional().describe("Created before"),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  wait: z.coerce.number().int().min(0).max(25).default(0).describe(
    "With `after`: seconds to wait for an event when there is none yet (long poll)",
  ),
});

const EventsPage = z.object({
  data: z.array(FeedEvent),
  next_cursor: z.string().describe("Pass as `after` to get the events that come after this answer"),
  older_cursor: z.string().nullable().describe("Newest first only: pass as `before` for older events"),
  has_more: z.boolean().describe("More events are there already (the next page is not empty)"),
});

const EXAMPLE_BODY = EVENT_CATALOGUE["donation.recorded"].example as Record<string, unknown> & { id: string };
const EXAMPLE_EVENT = {
  id: EXAMPLE_BODY.id,
  webhook_id: EXAMPLE_BODY.id,
  type: "donation.recorded",
  created_at: EXAMPLE_BODY.created_at as string,
  cursor: "WyJmMSIsIjc0MjE4IiwiYjNmNjFkNzItOWMwZS00ZTFhLWE1YzItMmQ4ZTZmMTBhYjQ0IiwxNzk1ODU5MjAwXQ",
  payload: EXAMPLE_BODY,
};

function eventOf(row: FeedRow, now: number) {
  return {
    id: row.id,
    webhook_id: row.id,
    type: row.type,
    created_at: new Date(row.created_at).toISOString(),
    cursor: encodeFeedCursor({ xid: row.xid, id: row.id, at: now }),
    payload: row.payload,
  };
}

function eventTypes(list?: string): string[] | undefined {
  if (!list) return undefined;
  const types = [...new Set(list.split(",").map((t) => t.trim()).filter(Boolean))];
  const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length || !types.length) {
    throw badRequest("invalid_request", `Invalid query: event_type (${unknown.join(", ") || "empty"})`, {
      fields: [{ field: "event_type", message: `unknown event type: ${unknown.join(", ") || "empty"}` }],
    });
  }
  return types;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

async function listEvents(deps: AppDeps, c: Context<ActorEnv>, q: z.infer<typeof ListEvents>) {
  if (q.after && q.before) {
    throw badRequest("invalid_request", "Invalid query: pass after or before, not both", {
      fields: [{ field: "before", message: "not with after" }],
    });
  }
  if (q.wait > 0 && !q.after) {
    throw badRequest("invalid_request", "Invalid query: wait needs after (a cursor to wait beyond)", {
      fields: [{ field: "wait", message: "needs after" }],
    });
  }
  const after = q.after ? decodeFeedCursor(q.after, "after") : undefined;
  const before = q.before ? decodeFeedCursor(q.before, "before") : undefined;
  const types = eventTypes(q.event_type);
  const query = { after, before, types, since: q.since, until: q.until, limit: q.limit };
  // One short transaction per look: a waiting request holds no database connection between looks.
  const look = () =>
    asAdmin(deps, c, async (tx, { organizationId }) => {
      const h = await feedHorizon(tx);
      if (after && after.at < h.now - h.days * 86400) throw expired(after, h.now, h.days);
      return { organizationId, ...h, rows: await feedPage(tx, organizationId, h.horizon, query) };
    });
  let page = await look();
  if (q.wait > 0 && page.rows.length === 0) {
    const org = page.organizationId;
    const held = waiting.get(org) ?? 0;
    if (held >= MAX_WAITING_PER_ORGANIZATION) {
      throw new AppError(
        429,
        "too_many_waiting",
        `This organization already has ${MAX_WAITING_PER_ORGANIZATION} requests waiting for events; ` +
          "poll without wait, or retry shortly",
        { max_waiting: MAX_WAITING_PER_ORGANIZATION },
        { "Retry-After": "5" },
      );
    }
    waiting.set(org, held + 1);
    try {
      const signal = c.req.raw.signal;
      const deadline = Date.now() + q.wait * 1000;
      while (page.rows.length === 0 && !signal.aborted) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        await sleep(Math.min(POLL_INTERVAL_MS, left), signal);
        if (!signal.aborted) page = await look();
      }
    } finally {
      const n = (waiting.get(org) ?? 1) - 1;
      if (n > 0) waiting.set(org, n);
      else waiting.delete(org);
    }
  }
  const rows = page.rows.slice(0, q.limit);
  const hasMore = page.rows.length > 0 && page.rows[0]!.found > rows.length;
  const data = rows.map((r) => eventOf(r, page.now));
  const forward = after !== undefined;
  // Forward: after the last event listed, or (nothing more below the horizon) at the horizon itself.
  // Newest first: the horizon, so following from there misses nothing this listing did not show.
  const next: Position = forward && hasMore
    ? { xid: rows.at(-1)!.xid, id: rows.at(-1)!.id, at: page.now }
    : forward && rows.length
    ? headPosition(page.horizon, page.now, { xid: rows.at(-1)!.xid, id: rows.at(-1)!.id, at: page.now })
    : headPosition(page.horizon, page.now, after);
  return {
    data,
    next_cursor: encodeFeedCursor(next),
    older_cursor: !forward && hasMore ? data.at(-1)!.cursor : null,
    has_more: hasMore,
  };
}

export const eventRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/events",
      summary: "List events, newest first or after a cursor",
      description: "The organization's events (not test events, nor those redacted when their person was " +
        "erased), each with the JSON body and `webhook-id` its deliveries carry; an event is stored when " +
        "an enabled endpoint subscribes to its type. Without `after`: newest first, `older_cursor` for " +
        "older pages. With `after`: oldest first from the cursor, in commit order, so a walk sees every " +
        "event exactly once; `wait` (up to 25 s) answers as soon as one exists. Kept as long as the " +
        "delivery history (`/log-retention`, 30 days by default); a cursor issued before that is 410 " +
        "`cursor_expired`. At most 10 waiting requests per organization (429 `too_many_waiting`).",
      tag: "Events",
      access: "admin",
      query: ListEvents,
      responses: {
        200: {
          description: "A page of events",
          schema: EventsPage,
          example: {
            data: [EXAMPLE_EVENT],
            next_cursor:
              "WyJmMSIsIjc0MjE4IiwiYjNmNjFkNzItOWMwZS00ZTFhLWE1YzItMmQ4ZTZmMTBhYjQ0IiwxNzk1ODU5MjAwXQ",
            older_cursor: null,
            has_more: false,
          },
        },
        410: { description: "`cursor_expired`: issued before the organization's retention began" },
        429: { description: "`too_many_waiting`: the organization's waiting requests are all in use" },
      },
    },
    async (c) => c.json(await listEvents(deps, c, c.req.valid("query"))),
  ),
  route(
    {
      method: "get",
      path: "/events/:id",
      summary: "Read one event with the body its deliveries carry",
      description: "The `webhook-id` header of a delivery is the event's id. The answer carries it as " +
        "the `webhook-id` header too.",
      tag: "Events",
      access: "admin",
      params: { id: z.uuid() },
      responses: {
        200: { description: "The event", schema: FeedEvent, example: EXAMPLE_EVENT },
        404: { description: "No such event (or a test event, or one redacted)" },
      },
    },
    async (c) => {
      const id = c.req.valid("param").id;
      const event = await asAdmin(deps, c, async (tx, { organizationId }) => {
        const [now] = await tx<{ now: number }[]>`select extract(epoch from now())::bigint::int8 as now`;
        const [row] = await tx<FeedRow[]>`
          select e.id, e.type, e.created_at, e.xid::text as xid, e.payload from public.webhook_events e
          where e.id = ${id} and e.organization_id = ${organizationId} and not e.payload ? 'test'
            and e.redacted_at is null`;
        if (!row) throw notFound("not_found", "No such event");
        return eventOf(row, Number(now!.now));
      });
      c.header("webhook-id", event.webhook_id);
      return c.json(event);
    },
  ),
];
