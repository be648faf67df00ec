// Settings > Integrations > Webhooks: an endpoint's activity chart (24 hours or 7 days, per hour or per
// 6 hours).
import { z } from "zod";
import { asAdmin } from "../actor.ts";
import { BUCKET_HOURS, type BucketRow, hourlyActivity, windowStart } from "../activity.ts";
import { route, type RouteFactory } from "../route.ts";
import { Activity, ActivityQuery } from "../schemas.ts";
import { visibleEndpoint } from "./endpoints.ts";

export const activityRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/endpoints/:id/activity",
      summary: "An endpoint's attempts and response times over time",
      description: "Attempts per hour (or 6 hours) over 24 hours or 7 days, delivered and failed, with " +
        "estimated response time percentiles, the window's start (`from`) and end (`as_of`), and the " +
        "endpoint's latest attempt read in the same snapshot (`latest`): one answer for a page's health " +
        "tiles and chart. The example is cut to 3 of its 24 points.",
      tag: "Endpoints",
      access: "admin",
      params: { id: z.uuid() },
      query: ActivityQuery,
      responses: {
        200: {
          description: "One point per hour (or per `bucket`), oldest first",
          schema: Activity,
          example: {
            window: "24h",
            bucket_seconds: 3600,
            points: [
              { start: "2026-11-27T11:00:00.000Z", delivered: 6, failed: 0, p50_ms: 142, p95_ms: 310 },
              { start: "2026-11-27T12:00:00.000Z", delivered: 9, failed: 2, p50_ms: 171, p95_ms: 9400 },
              { start: "2026-11-27T13:00:00.000Z", delivered: 0, failed: 0, p50_ms: null, p95_ms: null },
            ],
            totals: { delivered: 151, failed: 2, p50_ms: 158, p95_ms: 420 },
            from: "2026-11-26T14:00:00.000Z",
            as_of: "2026-11-27T13:42:05.118Z",
            latest: {
              last_attempt_at: "2026-11-27T13:40:12.530Z",
              last_response_status: 200,
              last_outcome: "delivered",
              consecutive_failures: 0,
              failing_since: null,
            },
          },
        },
        404: { description: "No such endpoint" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const { window, bucket } = c.req.valid("query");
      const now = Date.now();
      const from = new Date(windowStart(window, now));
      const { rows, bounds, latest } = await asAdmin(deps, c, async (tx) => {
        await visibleEndpoint(tx, endpointId);
        // One statement, so one snapshot: the points and the latest attempt cannot disagree (a delivery
        // recorded between two reads would show in one and not the other). At most 1,009 bucket rows of
        // one endpoint, by its primary key's range.
        const [r] = await tx<{ rows: BucketRow[] | null; bounds: number[]; latest: Latest | null }[]>`
          select (select json_agg(json_build_object('bucket_start', b.bucket_start, 'attempts', b.attempts,
                                                    'delivered', b.delivered,
                                                    'duration_histogram', b.duration_histogram))
                  from public.webhook_endpoint_health_buckets b
                  where b.endpoint_id = ${endpointId} and b.bucket_start >= ${from}) as rows,
                 private.webhook_duration_bounds() as bounds,
                 (select json_build_object('last_attempt_at', h.last_attempt_at,
                                           'last_response_status', h.last_response_status,
                                           'last_outcome', h.last_outcome,
                                           'consecutive_failures', h.consecutive_failures,
                                           'failing_since', h.failing_since)
                  from public.webhook_endpoint_health h where h.endpoint_id = ${endpointId}) as latest`;
        return { rows: r!.rows ?? [], bounds: r!.bounds, latest: r!.latest };
      });
      return c.json({
        window,
        bucket_seconds: BUCKET_HOURS[bucket] * 3600,
        ...hourlyActivity(rows, bounds, window, now, bucket),
        from: from.toISOString(),
        as_of: new Date(now).toISOString(),
        latest: latest
          ? {
            ...latest,
            last_attempt_at: iso(latest.last_attempt_at)!,
            failing_since: iso(latest.failing_since),
          }
          : NOTHING_YET,
      });
    },
  ),
];

interface Latest {
  last_attempt_at: string;
  last_response_status: number | null;
  last_outcome: "delivered" | "failed";
  consecutive_failures: number;
  failing_since: string | null;
}

const NOTHING_YET = {
  last_attempt_at: null,
  last_response_status: null,
  last_outcome: null,
  consecutive_failures: 0,
  failing_since: null,
};

/** A timestamp from json_build_object (Postgres's text form) as ISO 8601. */
const iso = (t: string | null) => t === null ? null : new Date(t).toISOString();
