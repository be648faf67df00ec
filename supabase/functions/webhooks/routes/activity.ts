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
        "estimated response time percentiles. The example is cut to 3 of its 24 points.",
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
          },
        },
        404: { description: "No such endpoint" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const { window, bucket } = c.req.valid("query");
      const now = Date.now();
      const { rows, bounds } = await asAdmin(deps, c, async (tx) => {
        await visibleEndpoint(tx, endpointId);
        // At most 1,009 rows of one endpoint, by its primary key's range.
        const rows = await tx<BucketRow[]>`
          select bucket_start, attempts, delivered, duration_histogram
          from public.webhook_endpoint_health_buckets
          where endpoint_id = ${endpointId} and bucket_start >= ${new Date(windowStart(window, now))}`;
        const [b] = await tx<{ bounds: number[] }[]>`select private.webhook_duration_bounds() as bounds`;
        return { rows, bounds: b!.bounds };
      });
      return c.json({
        window,
        bucket_seconds: BUCKET_HOURS[bucket] * 3600,
        ...hourlyActivity(rows, bounds, window, now, bucket),
      });
    },
  ),
];
