// The shapes the configuration API accepts and returns. Secrets appear only in the responses that
// create or rotate them.
import { z } from "@hono/zod-openapi"; // (zod, with .openapi() for examples in the document)
import { EVENT_TYPES } from "./catalogue.ts";
import { CustomHeadersCreate, CustomHeaderShown, CustomHeadersUpdate } from "./custom_headers.ts";

export const EventType = z.enum(EVENT_TYPES);

export const DELIVERY_STATES = ["pending", "retrying", "delivered", "permanently_failed"] as const;

// The same rule as the database's private.webhook_secret_acceptable: ours (whsec_ + base64 of at least
// 24 bytes) or the organization's own, 24 to 256 printable ASCII characters with 8 or more different.
export const Secret = z.string().refine(
  (s) =>
    s.startsWith("whsec_")
      ? /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(s)
      : /^[!-~]{24,256}$/.test(s) && new Set(s).size >= 8,
  "must be whsec_ followed by base64, or your own secret of 24 to 256 printable characters " +
    "(no spaces, at least 8 different)",
);

// Deliveries a second an endpoint may receive: small servers and automation plans limit requests.
// One message for every way a value can be wrong: the settings page shows it at its field, to an admin.
const RATE_LIMIT_MESSAGE =
  "must be a whole number from 1 to 1000 (deliveries a second); no value means no limit";
export const RateLimit = z.number(RATE_LIMIT_MESSAGE).int(RATE_LIMIT_MESSAGE).min(1, RATE_LIMIT_MESSAGE)
  .max(1000, RATE_LIMIT_MESSAGE);

/** Who made an endpoint or a key, in words (private.creator_display). */
export const CreatorDisplay = z.string().nullable().describe(
  "Who made it: the admin's name or e-mail address while they are a member of the organization, " +
    '"removed member" once they are not, "API key <name>" for what an automation platform made, null ' +
    "for what the server made",
).openapi({ example: "removed member" });

export const Endpoint = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(EventType),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  disabled_at: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable().describe(
    "While a rotated-out secret still signs (a second signature), until when",
  ),
  rate_limit_per_second: RateLimit.nullable().describe(
    "At most this many deliveries a second to this endpoint, across all dispatchers (null: no limit)",
  ),
  paused_until: z.string().nullable().describe(
    "Paused by the receiver until this time: it answered 429 Too Many Requests with Retry-After (at most " +
      "1 hour is honoured); nothing is sent to the endpoint before then. Null: not paused",
  ),
  custom_headers: z.array(CustomHeaderShown).describe(
    "Request headers sent with every delivery, by name; a value is never shown again, only its hint",
  ),
  created_by: z.uuid().nullable().describe("The admin who made it (null: an API key or the server)"),
  created_by_display: CreatorDisplay,
  created_at: z.string(),
  updated_at: z.string(),
});
export type EndpointRow = z.infer<typeof Endpoint>;
export const EndpointHealth = z.object({
  last_attempt_at: z.string().nullable().describe("When the endpoint was last tried"),
  last_response_status: z.number().int().nullable().describe(
    "HTTP status of the last attempt (null: no response)",
  ),
  last_outcome: z.enum(["delivered", "failed"]).nullable().describe("Result of the last attempt"),
  consecutive_failures: z.number().int().describe("Failed attempts since the last success"),
  success_rate_24h: z.number().min(0).max(1).nullable().describe(
    "Delivered attempts / attempts over the last 24 hours (null: no attempt). The 24 hours are the " +
      "activity view's: the current hour and the 23 before it, so the two agree.",
  ),
  attempts_24h: z.number().int().describe("Attempts over the last 24 hours (the activity view's 24 hours)"),
  failing_since: z.string().nullable().describe(
    "First failed attempt of the current run of failures (null: the last attempt succeeded or none " +
      "yet). After 5 days of failures only, the endpoint is disabled automatically.",
  ),
  mean_response_ms_24h: z.number().int().nullable().describe(
    "Mean response time of the attempts over the last 24 hours, in milliseconds (null: none timed)",
  ),
});
export type EndpointHealth = z.infer<typeof EndpointHealth>;
export const EndpointWithHealth = Endpoint.extend({ health: EndpointHealth });

export const EndpointWithSecret = Endpoint.extend({
  secret: Secret.describe(
    "The signing secret. Returned only when an endpoint is created or its secret rotated.",
  ),
});

export const CreateEndpoint = z.object({
  url: z.string().min(1).max(2048),
  events: z.array(EventType).min(1).max(EVENT_TYPES.length),
  description: z.string().max(500).optional(),
  secret: Secret.optional().describe("Your own secret; generated when omitted"),
  enabled: z.boolean().optional(),
  rate_limit_per_second: RateLimit.nullable().optional().describe(
    "At most this many deliveries a second (1 to 1000); omitted or null: no limit",
  ),
  custom_headers: CustomHeadersCreate.optional(),
}).strict();

export const UpdateEndpoint = z.object({
  url: z.string().min(1).max(2048).optional(),
  events: z.array(EventType).min(1).max(EVENT_TYPES.length).optional(),
  description: z.string().max(500).nullable().optional(),
  enabled: z.boolean().optional(),
  rate_limit_per_second: RateLimit.nullable().optional().describe(
    "At most this many deliveries a second (1 to 1000); null removes the limit",
  ),
  custom_headers: CustomHeadersUpdate.optional(),
}).strict().refine((v) => Object.keys(v).length > 0, "nothing to change");

export const RotateSecret = z.object({
  grace_seconds: z.number().int().min(0).max(7 * 24 * 3600).optional().describe(
    "How long the old secret keeps signing too (default 86400, at most 7 days)",
  ),
  secret: Secret.optional().describe("Your own new secret; generated when omitted"),
}).strict();

export const SendTest = z.object({
  event_type: z.enum(["webhook.test", ...EVENT_TYPES]).optional().describe(
    "webhook.test (the default), or any event type of the catalogue, sent with its example body. " +
      'Either way the body carries "test": true, so a receiver can tell it from a real event.',
  ),
}).strict();

export const ActivityQuery = z.object({
  window: z.enum(["24h", "7d"]).default("24h"),
  bucket: z.enum(["1h", "6h"]).default("1h").describe(
    "How long each point covers: an hour (the default; 168 thin points for 7 days) or 6 hours (28)",
  ),
});

export const Activity = z.object({
  window: z.enum(["24h", "7d"]),
  bucket_seconds: z.number().int().describe("Each point covers this long: 3600 (an hour) or 21600 (6 hours)"),
  points: z.array(z.object({
    start: z.string(),
    delivered: z.number().int().describe("Attempts that got a 2xx in time"),
    failed: z.number().int().describe("Every other attempt"),
    p50_ms: z.number().int().nullable().describe("Median response time (null: no timed attempt)"),
    p95_ms: z.number().int().nullable().describe("95th percentile response time"),
  })),
  totals: z.object({
    delivered: z.number().int(),
    failed: z.number().int(),
    p50_ms: z.number().int().nullable(),
    p95_ms: z.number().int().nullable(),
  }),
  from: z.string().describe("Start of the window: the first point's start"),
  as_of: z.string().describe("When these numbers were read; the window ends here"),
  latest: z.object({
    last_attempt_at: EndpointHealth.shape.last_attempt_at,
    last_response_status: EndpointHealth.shape.last_response_status,
    last_outcome: EndpointHealth.shape.last_outcome,
    consecutive_failures: EndpointHealth.shape.consecutive_failures,
    failing_since: EndpointHealth.shape.failing_since,
  }).describe(
    "The endpoint's last attempt and its run of failures, read in the same snapshot as the points, so a " +
      "page showing both never says 'nothing sent yet' beside a delivered attempt",
  ),
}).describe(
  "Attempts per hour (or per 6 hours) from the endpoint's health buckets, with its latest attempt. Percentiles " +
    "are estimated from a histogram of response times (buckets about 1.6x apart), so they are approximate.",
);

// Recover failed deliveries: a window of creation times, optionally one event type. The same fields
// ask for the preview (how many would be sent again) and for the recovery itself.
const RecoverWindow = {
  since: z.iso.datetime({ offset: true }).describe(
    "Recover permanently failed deliveries created at or after this time",
  ),
  until: z.iso.datetime({ offset: true }).optional().describe(
    "…and created before this time (default: now)",
  ),
  event_type: z.string().min(1).max(100).optional().describe("Only deliveries of this event type"),
};
const sinceUntil = (r: { since: string; until?: string }) =>
  !r.until || Date.parse(r.until) > Date.parse(r.since);
const UNTIL_AFTER_SINCE = { message: "until must be after since", path: ["until"] };

export const Recover = z.object(RecoverWindow).strict().refine(sinceUntil, UNTIL_AFTER_SINCE);

export const RecoverPreviewQuery = z.object(RecoverWindow).refine(sinceUntil, UNTIL_AFTER_SINCE);

export const RecoverPreview = z.object({
  count: z.number().int().describe("How many deliveries a recovery with these fields would send again"),
  more: z.boolean().describe("true when there are more than count (counting stops at 100,000)"),
});

export const RecoverResult = z.object({
  recovered: z.number().int().describe("How many deliveries were queued again"),
  recovery_id: z.uuid().describe(
    "Lists them in Webhook Logs: GET /webhooks/deliveries?recovery_id=… (the page: ?recovery=…)",
  ),
});

export const Delivery = z.object({
  id: z.uuid(),
  event_id: z.uuid().describe("Also the webhook-id header the receiver sees"),
  endpoint_id: z.uuid(),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATES),
  attempt_count: z.number().int(),
  next_attempt_at: z.string().nullable(),
  first_attempt_at: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  last_response_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  delivered_at: z.string().nullable(),
  test: z.boolean().describe('A test delivery (Send test event); its body carries "test": true'),
  recovery_id: z.uuid().nullable().describe("The recovery that last sent it again, if any"),
  created_at: z.string(),
});
export type DeliveryRow = z.infer<typeof Delivery>;

export const Attempt = z.object({
  id: z.uuid(),
  attempt_number: z.number().int(),
  attempted_at: z.string(),
  duration_ms: z.number().int().nullable(),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  response_excerpt: z.string().nullable(),
  request_headers: z.record(z.string(), z.string()).nullable().describe(
    "The headers we sent; signature values show only their first characters (null: no request went out)",
  ),
  response_headers: z.record(z.string(), z.string()).nullable().describe(
    "The receiver's headers (at most 50, 4 KiB; cookies not kept); null without a response",
  ),
});

export const DeliveryDetail = Delivery.extend({
  body: z.string().describe(
    "The exact body text that is signed and sent, byte for byte: HMAC-SHA256(secret, body) is the x-webhook-signature",
  ),
  payload: z.record(z.string(), z.unknown()).describe(
    "The body parsed (kept for compatibility; use body to verify)",
  ),
  attempts: z.array(Attempt),
});

/** A delivery's last HTTP answer by class; `none`: no HTTP answer (a timeout, a refused connection). */
export const STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx", "none"] as const;

// The Webhook Logs filter, declared once: the listing (ListDeliveries) and a bulk retry (RetryFilter)
// take the same fields. SQL applies them in private.webhook_bulk_retry_matches and listDeliveriesQuery.
const deliveryFilter = {
  endpoint_id: z.uuid().optional(),
  event_type: z.string().max(100).optional(),
  status: z.enum(DELIVERY_STATES).optional(),
  status_class: z.enum(STATUS_CLASSES).optional().describe(
    "The last HTTP status's class; `none`: no HTTP answer (a timeout, a refused connection, not attempted)",
  ),
  since: z.iso.datetime({ offset: true }).optional().describe("Created at or after"),
  until: z.iso.datetime({ offset: true }).optional().describe("Created before"),
  tests: z.enum(["include", "exclude", "only"]).default("include").describe(
    "Test deliveries (Send test event): listed with the others, left out, or listed alone",
  ),
  recovery_id: z.uuid().optional().describe(
    "The deliveries one recovery or bulk retry sent again (its recovery_id)",
  ),
};

export const ListDeliveries = z.object({
  q: z.uuid("enter a webhook-id, delivery id or event id (a UUID)").optional().describe(
    "Find one message: a delivery id, or an event id (= the webhook-id header the receiver saw)",
  ),
  ...deliveryFilter,
  contains: z.string().trim().min(3, "enter at least 3 characters to search for").max(200).optional()
    .describe(
      "Deliveries whose body contains this text, in any letter case (an e-mail address, a donation id)",
    ),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional().describe("next_cursor of the previous page"),
});

/**
 * What a bulk retry takes up: the Webhook Logs filter, of failing deliveries only. Delivered ones are
 * sent again one by one (redeliver), pending ones are due already.
 */
export const RetryFilter = z.object({
  ...deliveryFilter,
  status: z.enum(["retrying", "permanently_failed"], {
    error:
      "a bulk retry takes retrying or permanently_failed deliveries (redeliver a delivered one by itself)",
  }).optional().describe("Left out: both retrying and permanently failed deliveries"),
}).strict().refine((r) => !r.since || !r.until || Date.parse(r.until) > Date.parse(r.since), {
  message: "until must be after since",
  path: ["until"],
});

export const BulkRetry = z.object({
  id: z.uuid(),
  recovery_id: z.uuid().describe("Lists what it queued again: GET /deliveries?recovery_id=… (the same id)"),
  status: z.enum(["running", "done", "cancelled"]),
  filter: z.record(z.string(), z.unknown()).describe("The filter it was started with"),
  total: z.number().int().nullable().describe("Matching deliveries when it started; null: more than 100,000"),
  total_more: z.boolean(),
  processed: z.number().int().describe("Matching deliveries dealt with so far (retried or skipped)"),
  retried: z.number().int().describe("Queued to be sent now"),
  skipped: z.record(z.string(), z.number().int()).describe(
    "Passed over, by reason: in_flight (being sent right now), endpoint_disabled, erased (its person was erased)",
  ),
  requested_by: z.uuid().nullable(),
  requested_by_api_key_id: z.uuid().nullable(),
  requested_at: z.string(),
  finished_at: z.string().nullable(),
}).openapi("BulkRetry", {
  example: {
    id: "5b0d6c1e-2f3a-4b5c-8d6e-7f8091a2b3c4",
    recovery_id: "5b0d6c1e-2f3a-4b5c-8d6e-7f8091a2b3c4",
    status: "running",
    filter: { status: "retrying", endpoint_id: "2b7e4c1a-9d3f-4e58-8a61-0c5d7f9e1b23", tests: "include" },
    total: 2400,
    total_more: false,
    processed: 1000,
    retried: 998,
    skipped: { in_flight: 2 },
    requested_by: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
    requested_by_api_key_id: null,
    requested_at: "2026-12-07T17:02:00.000Z",
    finished_at: null,
  },
});
export type BulkRetryRow = z.infer<typeof BulkRetry>;

export const Page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().describe("Pass as cursor for the next page"),
  });

/** The Webhook Logs listing's page: with `contains`, how far the content search reaches. */
export const DeliveryPage = <T extends z.ZodType>(item: T) =>
  Page(item).extend({
    searchable_until: z.iso.datetime().nullable().optional().describe(
      "Only with `contains`: the content search covers every delivery recorded before this time (and " +
        "the newest 2,000 the other filters keep, checked one by one); newer ones are searchable once " +
        "the search index reaches them, normally within seconds. Null until the index's first batch.",
    ),
  });

export const Subscribe = z.object({
  target_url: z.string().min(1).max(2048),
  event: EventType,
}).strict();
